// Dropout. In inference (no training_mode input, or false, or ratio 0) the
// output is the input and the mask is all true. With training_mode true the
// output is random: kept elements are scaled by 1 / (1 - ratio), using a
// generator seeded by the `seed` attribute when present.
#include <cstring>
#include <random>

#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

class Dropout final : public OpKernel {
 public:
  explicit Dropout(const OpKernelInfo& info)
      : ratio_attr_(info.AttrOr<float>("ratio", 0.5f)),
        has_seed_(info.HasAttr("seed")),
        seed_(info.AttrOr<int64_t>("seed", 0)),
        mask_type_(info.OutputType(1) != DataType::kUndefined
                       ? info.OutputType(1)
                       : (info.node().since_version >= 10 ? DataType::kBool : info.InputType(0))) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "data"));
    bool training = false;
    if (const Tensor* t = ctx.Input(2)) {
      if (t->type() != DataType::kBool || t->num_elements() != 1) {
        return ctx.Error("training_mode must be a bool scalar");
      }
      training = t->data<bool>()[0];
    }
    float ratio = ratio_attr_;
    if (const Tensor* r = ctx.Input(1)) {
      if (r->num_elements() != 1) return ctx.Error("ratio must be a scalar, received " + DimsToString(r->dims()));
      ratio = static_cast<float>(ScalarAsDouble(*r));
    }
    if (training && (ratio < 0.f || ratio >= 1.f)) {
      return ctx.Error(absl::StrCat("ratio must be in [0, 1), received ", ratio));
    }
    const bool drop = training && ratio > 0.f;
    const int64_t n = x->num_elements();
    std::vector<bool> keep;
    if (drop) {
      std::mt19937_64 gen(has_seed_ ? static_cast<uint64_t>(seed_) : std::random_device{}());
      std::uniform_real_distribution<float> uniform(0.f, 1.f);
      keep.resize(n);
      for (int64_t i = 0; i < n; ++i) keep[i] = uniform(gen) >= ratio;
    }
    if (!drop) {
      ctx.SetOutput(0, Value(*x));
    } else {
      ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
      const Tensor xf = UpcastToFloat(*x);
      Tensor yf = IsHalfLike(x->type()) ? Tensor::Allocate(DataType::kFloat, x->dims()) : *y;
      const double scale = 1.0 / (1.0 - ratio);
      RETURN_IF_ERROR(DispatchList(FloatCompute{}, xf.type(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < n; ++i) {
          yf.mutable_data<T>()[i] = keep[i] ? static_cast<T>(xf.data<T>()[i] * scale) : T(0);
        }
        return absl::OkStatus();
      }));
      if (IsHalfLike(x->type())) DowncastFromFloat(yf, *y);
    }
    if (ctx.OutputRequested(1)) {
      ASSIGN_OR_RETURN(Tensor* mask, ctx.Output(1, x->dims(), mask_type_));
      Tensor ones = Tensor::Allocate(DataType::kBool, x->dims());
      for (int64_t i = 0; i < n; ++i) ones.mutable_data<bool>()[i] = !drop || keep[i];
      ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(ones, mask_type_));
      std::memcpy(mask->mutable_raw(), converted.raw(), mask->byte_size());
    }
    return absl::OkStatus();
  }

 private:
  float ratio_attr_;
  bool has_seed_;
  int64_t seed_;
  DataType mask_type_;
};

}  // namespace

void RegisterDropoutKernels(KernelRegistry& r) {
  // Opsets 1-6 add only is_test (inference ignores it).
  r.Register(KernelDefBuilder("Dropout").Since(1, 6).Build(), MakeFactory<Dropout>());
  r.Register(KernelDefBuilder("Dropout").Since(7).Build(), MakeFactory<Dropout>());
}

}  // namespace onyx
