// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare over any axes
// (attribute, or from opset 13 / 18 on a constant `axes` input), keepdims and
// noop_with_empty_axes. Reduced axes that form one contiguous block run as
// one [outer, r, inner] reduction; any other set as a strided reduction.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/broadcast.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

// The opset from which the op takes `axes` as an input.
int AxesInputSince(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

class Reduce final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, ReduceOp op) {
    RETURN_IF_ERROR(CheckReduceNode(info));
    auto k = std::unique_ptr<Reduce>(new Reduce(op));
    k->keepdims_ = info.AttrOr<int64_t>("keepdims", 1) != 0;
    k->noop_with_empty_axes_ = info.AttrOr<int64_t>("noop_with_empty_axes", 0) != 0;
    if (info.node().since_version >= AxesInputSince(info.node().op_type)) {
      if (const Tensor* axes = info.ConstantInput(1)) {
        ASSIGN_OR_RETURN(k->axes_, ReadInt64s(info, *axes, "axes"));
      }
    } else {
      k->axes_ = info.AttrOr<std::vector<int64_t>>("axes", {});
    }
    RETURN_IF_ERROR(k->UploadConstantInputs(info, {1}));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    if (x->type() != DataType::kFloat && x->type() != DataType::kFloat16) {
      return ctx.Error(absl::StrCat("computes float and float16 on CUDA, received ", DataTypeName(x->type())));
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    const int64_t rank = x->rank();
    const cudaStream_t stream = CurrentCudaLane().stream;
    std::vector<bool> reduced(rank, axes_.empty());
    if (axes_.empty() && noop_with_empty_axes_) {
      ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, x->dims(), x->type()));
      return CheckLaunch(ctx,
                         cudaMemcpyAsync(y->mutable_raw(), x->raw(), x->byte_size(), cudaMemcpyDeviceToDevice, stream));
    }
    for (int64_t a : axes_) {
      if (!NormalizeAxis(a, rank)) return ctx.Error(absl::StrCat("axis ", a, " is out of range for rank ", rank));
      reduced[a] = true;
    }
    Dims out_dims;
    for (int64_t k = 0; k < rank; ++k) {
      if (!reduced[k]) out_dims.push_back(x->dims()[k]);
      else if (keepdims_) out_dims.push_back(1);
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x->type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    // Groups of adjacent dims (dims of 1 dropped) with one reduced flag.
    std::vector<int64_t> sizes;
    std::vector<bool> flags;
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t d = x->dims()[k];
      if (d == 1) continue;
      if (!flags.empty() && flags.back() == reduced[k]) {
        sizes.back() *= d;
      } else {
        sizes.push_back(d);
        flags.push_back(reduced[k]);
      }
    }
    const int reduced_groups = static_cast<int>(std::count(flags.begin(), flags.end(), true));
    if (reduced_groups <= 1) {
      int64_t outer = 1, r = 1, inner = 1;
      bool after = false;
      for (size_t g = 0; g < sizes.size(); ++g) {
        if (flags[g]) {
          r = sizes[g];
          after = true;
        } else {
          (after ? inner : outer) *= sizes[g];
        }
      }
      if (x->num_elements() == 0) r = 0;
      return CheckLaunch(ctx, LaunchReduce(op_, x->type(), x->raw(), y->mutable_raw(), outer, r, inner, stream));
    }
    Dims strides = StridesOf(x->dims());
    std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
    for (int64_t k = 0; k < rank; ++k) {
      (reduced[k] ? red_dims : kept_dims).push_back(x->dims()[k]);
      (reduced[k] ? red_strides : kept_strides).push_back(strides[k]);
    }
    auto kept = MakeStridedCopy(kept_dims, kept_strides, 0);
    auto red = MakeStridedCopy(red_dims, red_strides, 0);
    if (!kept.ok() || !red.ok()) return ctx.Error((kept.ok() ? red : kept).status().message());
    return CheckLaunch(ctx, LaunchReduceStrided(op_, x->type(), *kept, *red, x->raw(), y->mutable_raw(), stream));
  }

 private:
  explicit Reduce(ReduceOp op) : op_(op) {}
  ReduceOp op_;
  bool keepdims_ = true;
  bool noop_with_empty_axes_ = false;
  std::vector<int64_t> axes_;
};

void RegisterReduce(KernelRegistry& r, const char* op, ReduceOp kind) {
  r.Register(KernelDefBuilder(op).Since(1).Types("T", kCudaFloatTypes).Build(),
             [kind](const OpKernelInfo& info) { return Reduce::Create(info, kind); });
}

}  // namespace

absl::Status CheckReduceNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (!n.domain.empty() || n.op_type.rfind("Reduce", 0) != 0) return absl::OkStatus();
  if (n.since_version >= AxesInputSince(n.op_type)) return RequireConstantInput(info, 1, "axes");
  return absl::OkStatus();
}

void RegisterReduceKernels(KernelRegistry& r) {
  RegisterReduce(r, "ReduceSum", ReduceOp::kSum);
  RegisterReduce(r, "ReduceMean", ReduceOp::kMean);
  RegisterReduce(r, "ReduceMax", ReduceOp::kMax);
  RegisterReduce(r, "ReduceMin", ReduceOp::kMin);
  RegisterReduce(r, "ReduceSumSquare", ReduceOp::kSumSquare);
}

}  // namespace onyx::cuda_ops
