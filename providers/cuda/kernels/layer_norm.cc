// LayerNormalization (opset 17, with the optional Mean and InvStdDev outputs)
// and the optimizer's com.onyx LayerNormalization (FuseLayerNorm): rows of
// X split at `axis`, normalised with float statistics. Scale and bias have
// one value per element of a row.
#include "absl/strings/str_cat.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

class LayerNorm final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckNormalizationNode(info));
    auto k = std::unique_ptr<LayerNorm>(
        new LayerNorm(info.AttrOr<int64_t>("axis", -1), info.AttrOr<float>("epsilon", 1e-5f)));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1));
    const Tensor* bias = DeviceInput(ctx, 2);
    if (x->type() != DataType::kFloat && x->type() != DataType::kFloat16) {
      return ctx.Error(absl::StrCat("computes float and float16 on CUDA, received ", DataTypeName(x->type())));
    }
    if (scale->type() != x->type() || (bias != nullptr && bias->type() != x->type())) {
      return ctx.Error(absl::StrCat("scale and bias must be ", DataTypeName(x->type()), " like X"));
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, x->rank())) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x->rank()));
    }
    int64_t rows = 1, cols = 1;
    for (int64_t i = 0; i < x->rank(); ++i) (i < axis ? rows : cols) *= x->dims()[i];
    if (scale->num_elements() != cols || (bias != nullptr && bias->num_elements() != cols)) {
      return ctx.Error(absl::StrCat("scale ", DimsToString(scale->dims()),
                                    bias ? absl::StrCat(" and bias ", DimsToString(bias->dims())) : "", " must have ",
                                    cols, " elements (one per element of the normalised dims)"));
    }
    if (cols == 0 && rows > 0) return ctx.Error("the normalised dims are empty");
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, x->dims(), x->type()));
    // Mean and InvStdDev: X's dims with the normalised ones set to 1, float.
    Dims stat_dims = x->dims();
    for (int64_t i = axis; i < x->rank(); ++i) stat_dims[i] = 1;
    float* stats[2] = {nullptr, nullptr};
    for (int o = 1; o <= 2 && o < ctx.OutputCount(); ++o) {
      if (!ctx.OutputRequested(o)) continue;
      ASSIGN_OR_RETURN(Tensor* t, ctx.OutputForOverwrite(o, stat_dims, DataType::kFloat));
      stats[o - 1] = t->mutable_data<float>();
    }
    return CheckLaunch(
        ctx, LaunchLayerNorm(x->type(), x->raw(), scale->raw(), bias ? bias->raw() : nullptr, y->mutable_raw(),
                             stats[0], stats[1], rows, cols, epsilon_, CurrentCudaLane().stream));
  }

 private:
  LayerNorm(int64_t axis, float epsilon) : axis_(axis), epsilon_(epsilon) {}
  int64_t axis_;
  float epsilon_;
};

}  // namespace

absl::Status CheckNormalizationNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (n.op_type != "LayerNormalization" || (!n.domain.empty() && n.domain != kOnyxDomain)) return absl::OkStatus();
  const DataType t = info.InputType(0);
  if (t != DataType::kUndefined && t != DataType::kFloat && t != DataType::kFloat16) {
    return info.Error(
        absl::StrCat("LayerNormalization computes float and float16 on CUDA, received ", DataTypeName(t)));
  }
  if (n.domain.empty() && info.AttrOr<int64_t>("stash_type", 1) != 1) {
    return info.Error(absl::StrCat("stash_type ", info.AttrOr<int64_t>("stash_type", 1),
                                   " is not supported on CUDA (statistics are float: stash_type 1)"));
  }
  return absl::OkStatus();
}

void RegisterLayerNormKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("LayerNormalization").Since(17).Types("T", kCudaFloatTypes).Build(), LayerNorm::Create);
  r.Register(KernelDefBuilder("LayerNormalization").Domain(kOnyxDomain).Build(), LayerNorm::Create);
}

}  // namespace onyx::cuda_ops
