// Cast (float, float16, bfloat16, double, int8, uint8, int32, int64, bool),
// Where (three-way broadcast, any element type) and Expand (a constant
// shape; a broadcast copy).
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/broadcast.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

const std::vector<DataType> kCastTypes = {DataType::kFloat,  DataType::kFloat16, DataType::kBFloat16,
                                          DataType::kDouble, DataType::kInt8,    DataType::kUint8,
                                          DataType::kInt32,  DataType::kInt64,   DataType::kBool};

class Cast final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(int64_t to, info.Attr<int64_t>("to"));
    if (!IsValidDataType(static_cast<int32_t>(to))) return info.Error(absl::StrCat("'to' = ", to, " is not a type"));
    auto k = std::unique_ptr<Cast>(new Cast(static_cast<DataType>(to)));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    if (!CastSupported(x->type(), to_)) {
      return ctx.Error(
          absl::StrCat("cast from ", DataTypeName(x->type()), " to ", DataTypeName(to_), " is not supported on CUDA"));
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, x->dims(), to_));
    const cudaStream_t stream = CurrentCudaLane().stream;
    if (x->type() == to_) {
      return CheckLaunch(ctx,
                         cudaMemcpyAsync(y->mutable_raw(), x->raw(), x->byte_size(), cudaMemcpyDeviceToDevice, stream));
    }
    return CheckLaunch(ctx, LaunchCast(x->type(), to_, x->raw(), y->mutable_raw(), x->num_elements(), stream));
  }

 private:
  explicit Cast(DataType to) : to_(to) {}
  DataType to_;
};

class Where final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<Where>(new Where());
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* cond, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 1));
    ASSIGN_OR_RETURN(const Tensor* z, RequiredInput(ctx, 2));
    if (cond->type() != DataType::kBool || x->type() != z->type()) {
      return ctx.Error(absl::StrCat("expects a bool condition and X, Y of one type; received ",
                                    DataTypeName(cond->type()), ", ", DataTypeName(x->type()), ", ",
                                    DataTypeName(z->type())));
    }
    auto out_dims = BroadcastShape({cond->dims(), x->dims(), z->dims()});
    if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
    RETURN_IF_ERROR(CheckIndexable(ctx, NumElements(*out_dims), "the output"));
    auto args = MakeBroadcastArgs(*out_dims, {cond->dims(), x->dims(), z->dims()});
    if (!args.ok()) return ctx.Error(args.status().message());
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *out_dims, x->type()));
    return CheckLaunch(ctx, LaunchWhere(ElementSize(x->type()), *args, cond->raw(), x->raw(), z->raw(),
                                        y->mutable_raw(), CurrentCudaLane().stream));
  }

 private:
  Where() = default;
};

class Expand final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckCastWhereExpandNode(info));
    auto k = std::unique_ptr<Expand>(new Expand());
    const Tensor* shape = info.ConstantInput(1);
    if (shape == nullptr) return info.Error("input 1 ('shape') is missing");
    ASSIGN_OR_RETURN(k->shape_, ReadInt64s(info, *shape, "shape"));
    RETURN_IF_ERROR(k->UploadConstantInputs(info, {1}));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    auto out_dims = BroadcastShape({x->dims(), shape_});
    if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
    RETURN_IF_ERROR(CheckIndexable(ctx, NumElements(*out_dims), "the output"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *out_dims, x->type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    auto args = MakeExpandCopy(x->dims(), *out_dims);
    if (!args.ok()) return ctx.Error(args.status().message());
    size_t elem = ElementSize(x->type());
    WidenInnermost(*args, elem, x->raw(), y->raw());
    return CheckLaunch(ctx, LaunchStridedCopy(elem, *args, x->raw(), y->mutable_raw(), CurrentCudaLane().stream));
  }

 private:
  Expand() = default;
  std::vector<int64_t> shape_;
};

}  // namespace

absl::Status CheckCastWhereExpandNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (n.domain.empty() && n.op_type == "Expand") return RequireConstantInput(info, 1, "shape");
  return absl::OkStatus();
}

void RegisterCastWhereExpandKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Cast").Since(6).Types("T1", kCastTypes).Types("T2", kCastTypes).Build(), Cast::Create);
  r.Register(KernelDefBuilder("Where").Since(9).Types("T", kCudaCopyTypes).Build(), Where::Create);
  r.Register(KernelDefBuilder("Expand").Since(8).Types("T", kCudaCopyTypes).Build(), Expand::Create);
}

}  // namespace onyx::cuda_ops
