// GroupNormalization-18 (scale and bias per group) and -21 (per channel,
// statistics in stash_type). ONNX Runtime 1.30 runs both as their ONNX
// function bodies, so this kernel follows those bodies step by step, each
// intermediate rounded where ONNX Runtime rounds it (checked bit for bit on
// float16 against ONNX Runtime): the variance is E[x^2] - E[x]^2, sums are
// taken in double and then rounded. Scale and bias may also hold one value
// (the bodies broadcast).
#include <cmath>
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

// Rounds a double to the precision of `type` (float, double, float16 or
// bfloat16), as one arithmetic op of that type would.
double RoundTo(DataType type, double v) {
  switch (type) {
    case DataType::kFloat: return static_cast<float>(v);
    case DataType::kFloat16: return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case DataType::kBFloat16: return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
    default: return v;
  }
}

bool IsFloatType(DataType t) { return t == DataType::kFloat || t == DataType::kDouble || IsHalfLike(t); }

class GroupNormalization final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<GroupNormalization>(new GroupNormalization());
    k->per_channel_ = info.node().since_version >= 21;
    k->epsilon_ = info.AttrOr<float>("epsilon", 1e-5f);
    ASSIGN_OR_RETURN(k->groups_, info.Attr<int64_t>("num_groups"));
    if (k->groups_ <= 0) return info.Error(absl::StrCat("num_groups must be positive, received ", k->groups_));
    if (k->per_channel_) {
      const int64_t stash = info.AttrOr<int64_t>("stash_type", 1);
      k->stash_ = static_cast<DataType>(stash);
      if (stash != static_cast<int32_t>(stash) || !IsFloatType(k->stash_)) {
        return info.Error(absl::StrCat("stash_type must be a float type (1, 10, 11 or 16), received ", stash));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* scale_in, RequireInput(ctx, 1, "scale"));
    ASSIGN_OR_RETURN(const Tensor* bias_in, RequireInput(ctx, 2, "bias"));
    if (x_in->rank() < 2) return ctx.Error("X must have rank >= 2, received " + DimsToString(x_in->dims()));
    const int64_t batch = x_in->dims()[0], channels = x_in->dims()[1];
    if (channels % groups_ != 0) {
      return ctx.Error(absl::StrCat("num_groups ", groups_, " does not divide X's ", channels, " channels"));
    }
    const int64_t params = per_channel_ ? channels : groups_;
    for (const Tensor* p : {scale_in, bias_in}) {
      if (p->num_elements() != params && p->num_elements() != 1) {
        return ctx.Error(absl::StrCat(p == scale_in ? "scale" : "bias", " has ", p->num_elements(), " values ",
                                      DimsToString(p->dims()), ", expected ", params,
                                      per_channel_ ? " (one per channel)" : " (one per group, opset 18)"));
      }
    }
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, x_in->dims(), x_in->type()));
    const DataType t = x_in->type();
    // X is cast to `stash` and the normalised values come back in it; the
    // statistics between run in float (double for a double stash): ONNX
    // Runtime runs float16 arithmetic in float. Opset 18 has no casts.
    const DataType stash = per_channel_ ? stash_ : (IsHalfLike(t) ? DataType::kFloat : t);
    const DataType stats = stash == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
    const DataType affine = t == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
    ASSIGN_OR_RETURN(Tensor x, ConvertNumeric(*x_in, DataType::kDouble));
    ASSIGN_OR_RETURN(Tensor scale, ConvertNumeric(*scale_in, DataType::kDouble));
    ASSIGN_OR_RETURN(Tensor bias, ConvertNumeric(*bias_in, DataType::kDouble));
    Tensor y = Tensor::Allocate(DataType::kDouble, x_in->dims());
    const int64_t per_group = batch * channels == 0 ? 0 : x.num_elements() / (batch * groups_);
    const int64_t spatial = channels == 0 ? 0 : per_group * groups_ / channels;
    const double* px = x.data<double>();
    const double* ps = scale.data<double>();
    const double* pb = bias.data<double>();
    double* py = y.mutable_data<double>();
    const double eps = RoundTo(stash, epsilon_);
    ParallelFor(batch * groups_, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, per_group)),
                [&](int64_t begin, int64_t end) {
      for (int64_t ng = begin; ng < end; ++ng) {
        const double* src = px + ng * per_group;
        double* dst = py + ng * per_group;
        double sum = 0, sum_sq = 0;
        for (int64_t i = 0; i < per_group; ++i) {
          const double v = RoundTo(stash, src[i]);
          sum += v;
          sum_sq += RoundTo(stats, v * v);
        }
        const double mean = RoundTo(stats, sum / per_group);
        const double mean_sq = RoundTo(stats, sum_sq / per_group);
        const double var = RoundTo(stats, mean_sq - RoundTo(stats, mean * mean));
        const double stddev = RoundTo(stats, std::sqrt(RoundTo(stats, var + eps)));
        for (int64_t i = 0; i < per_group; ++i) {
          const double v = RoundTo(stash, src[i]);
          const double normalized = RoundTo(stash, RoundTo(stats, v - mean) / stddev);
          const int64_t p = per_channel_ ? (ng % groups_) * (channels / groups_) + i / spatial : ng % groups_;
          const double s = ps[scale.num_elements() == 1 ? 0 : p], b = pb[bias.num_elements() == 1 ? 0 : p];
          dst[i] = RoundTo(affine, RoundTo(affine, s * normalized) + b);
        }
      }
    });
    ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(y, t));
    std::memcpy(y_out->mutable_raw(), converted.raw(), y_out->byte_size());
    return absl::OkStatus();
  }

 private:
  GroupNormalization() = default;

  bool per_channel_ = false;  // opset 21
  float epsilon_ = 1e-5f;
  int64_t groups_ = 1;
  DataType stash_ = DataType::kFloat;
};

}  // namespace

void RegisterGroupNormKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("GroupNormalization").Since(18).Types("T", kFloatTypes).Build(),
             MakeFactory<GroupNormalization>());
}

}  // namespace onyx
