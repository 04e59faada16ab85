// MaxPool and AveragePool over 1 to 3 spatial dims (pads, auto_pad,
// dilations, ceil_mode, count_include_pad), GlobalAveragePool and
// GlobalMaxPool (a mean / max over each [N, C] plane). MaxPool's optional
// Indices output is not computed: such nodes are declined.
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"
#include "providers/cuda/kernels/spatial.h"

namespace onyx::cuda_ops {
namespace {

absl::Status RequireFloat(const OpKernelContext& ctx, const Tensor& x) {
  if (x.type() == DataType::kFloat || x.type() == DataType::kFloat16) return absl::OkStatus();
  return ctx.Error(absl::StrCat("computes float and float16 on CUDA, received ", DataTypeName(x.type())));
}

class Pool final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, PoolOp op) {
    RETURN_IF_ERROR(CheckPoolNode(info));
    auto k = std::unique_ptr<Pool>(
        new Pool(op, SpatialAttributes::FromInfo(info), info.AttrOr<int64_t>("count_include_pad", 0) != 0));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    RETURN_IF_ERROR(RequireFloat(ctx, *x));
    const int64_t spatial = x->rank() - 2;
    if (spatial < 1 || spatial > 3) {
      return ctx.Error(absl::StrCat("pools 1 to 3 spatial dims on CUDA, received input ", DimsToString(x->dims())));
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    std::vector<int64_t> in(x->dims().begin() + 2, x->dims().end());
    auto geometry = ResolvePoolGeometry(attrs_, in);
    if (!geometry.ok()) return ctx.Error(geometry.status().message());
    const SpatialGeometry& g = *geometry;
    Dims out_dims = {x->dims()[0], x->dims()[1]};
    out_dims.insert(out_dims.end(), g.out.begin(), g.out.end());
    RETURN_IF_ERROR(CheckIndexable(ctx, NumElements(out_dims), "the output"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x->type()));
    PoolArgs args;
    args.spatial = static_cast<int32_t>(spatial);
    args.nc = x->dims()[0] * x->dims()[1];
    args.count_include_pad = count_include_pad_;
    for (int64_t i = 0; i < spatial; ++i) {
      const int64_t slot = 3 - spatial + i;  // right-aligned
      args.in[slot] = g.in[i];
      args.out[slot] = g.out[i];
      args.kernel[slot] = g.kernel[i];
      args.stride[slot] = g.strides[i];
      args.dilation[slot] = g.dilations[i];
      args.pad_begin[slot] = g.pad_begin[i];
      args.pad_end[slot] = g.pad_end[i];
    }
    return CheckLaunch(ctx, LaunchPool(op_, x->type(), args, x->raw(), y->mutable_raw(), CurrentCudaLane().stream));
  }

 private:
  Pool(PoolOp op, SpatialAttributes attrs, bool count_include_pad)
      : op_(op), attrs_(std::move(attrs)), count_include_pad_(count_include_pad) {}
  PoolOp op_;
  SpatialAttributes attrs_;
  bool count_include_pad_;
};

class GlobalPool final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, ReduceOp op) {
    auto k = std::unique_ptr<GlobalPool>(new GlobalPool(op));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    RETURN_IF_ERROR(RequireFloat(ctx, *x));
    if (x->rank() < 2) return ctx.Error(absl::StrCat("input ", DimsToString(x->dims()), " has no channel dim"));
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    Dims out_dims = x->dims();
    int64_t plane = 1;
    for (int64_t i = 2; i < x->rank(); ++i) {
      plane *= out_dims[i];
      out_dims[i] = 1;
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x->type()));
    return CheckLaunch(ctx, LaunchReduce(op_, x->type(), x->raw(), y->mutable_raw(), x->dims()[0] * x->dims()[1], plane,
                                         1, CurrentCudaLane().stream));
  }

 private:
  explicit GlobalPool(ReduceOp op) : op_(op) {}
  ReduceOp op_;
};

}  // namespace

absl::Status CheckPoolNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (!n.domain.empty()) return absl::OkStatus();
  if (n.op_type == "MaxPool" && info.OutputCount() > 1 && !n.outputs[1].empty()) {
    return info.Error("MaxPool's Indices output is not computed on CUDA");
  }
  if (n.op_type == "MaxPool" || n.op_type == "AveragePool") {
    if (info.AttrOr<std::vector<int64_t>>("kernel_shape", {}).empty()) {
      return info.Error("attribute 'kernel_shape' is required");
    }
  }
  return absl::OkStatus();
}

void RegisterPoolKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MaxPool").Since(1).Types("T", kCudaFloatTypes).Build(),
             [](const OpKernelInfo& info) { return Pool::Create(info, PoolOp::kMax); });
  r.Register(KernelDefBuilder("AveragePool").Since(1).Types("T", kCudaFloatTypes).Build(),
             [](const OpKernelInfo& info) { return Pool::Create(info, PoolOp::kAverage); });
  r.Register(KernelDefBuilder("GlobalAveragePool").Since(1).Types("T", kCudaFloatTypes).Build(),
             [](const OpKernelInfo& info) { return GlobalPool::Create(info, ReduceOp::kMean); });
  r.Register(KernelDefBuilder("GlobalMaxPool").Since(1).Types("T", kCudaFloatTypes).Build(),
             [](const OpKernelInfo& info) { return GlobalPool::Create(info, ReduceOp::kMax); });
}

}  // namespace onyx::cuda_ops
