// RMSNormalization (opset 23): y = x / sqrt(mean(x^2) + epsilon) * scale, the
// mean over the dimensions [axis, rank). float16 and bfloat16 compute in
// float; double, or stash_type double, in double. The scale broadcasts to X's
// shape (usually it spans the normalized dimensions only); the output has the
// scale's type.
#include <cmath>
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/llm/llm_kernels.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"

namespace onyx {
namespace {

class RmsNormalization final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const int64_t stash = info.AttrOr<int64_t>("stash_type", 1);
    const auto stash_type = static_cast<DataType>(stash);
    if (stash_type != DataType::kFloat && stash_type != DataType::kDouble && !IsHalfLike(stash_type)) {
      return info.Error(absl::StrCat("stash_type must be a floating-point type, received ", stash));
    }
    return std::unique_ptr<OpKernel>(
        new RmsNormalization(info.AttrOr<int64_t>("axis", -1), info.AttrOr<float>("epsilon", 1e-5f), stash_type));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* scale, RequireInput(ctx, 1, "scale"));
    for (const Tensor* t : {x, scale}) {
      if (t->type() != DataType::kFloat && t->type() != DataType::kDouble && !IsHalfLike(t->type())) {
        return ctx.Error(absl::StrCat("X and scale must be floating point, received ", DataTypeName(t->type())));
      }
    }
    ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, x->rank()));
    if (x->rank() == 0) return ctx.Error("X must have rank >= 1");
    ASSIGN_OR_RETURN(Dims out_dims, BroadcastShape(x->dims(), scale->dims()));
    if (out_dims != x->dims()) {
      return ctx.Error(
          absl::StrCat("scale ", DimsToString(scale->dims()), " does not broadcast to X ", DimsToString(x->dims())));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), scale->type()));
    const bool in_double = x->type() == DataType::kDouble || stash_type_ == DataType::kDouble;
    const DataType compute = in_double ? DataType::kDouble : DataType::kFloat;
    ASSIGN_OR_RETURN(Tensor xc, ConvertNumeric(*x, compute));
    ASSIGN_OR_RETURN(Tensor sc, ConvertNumeric(*scale, compute));
    Tensor yc = y->type() == compute ? *y : Tensor::Allocate(compute, x->dims());
    const auto strides = BroadcastStrides(scale->dims(), x->dims());
    if (in_double) {
      Normalize<double>(xc, sc, strides, axis, yc);
    } else {
      Normalize<float>(xc, sc, strides, axis, yc);
    }
    if (y->type() == compute) return absl::OkStatus();
    ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(yc, y->type()));
    std::memcpy(y->mutable_raw(), converted.raw(), y->byte_size());
    return absl::OkStatus();
  }

 private:
  RmsNormalization(int64_t axis, float epsilon, DataType stash_type)
      : axis_(axis), epsilon_(epsilon), stash_type_(stash_type) {}

  // Row r of `rows` rows of `len` elements; the scale element of (r, j) is
  // lead_offset(r) + norm_offset[j] under its broadcast strides.
  template <typename C>
  void Normalize(const Tensor& x, const Tensor& scale, const std::vector<int64_t>& strides, int64_t axis,
                 Tensor& y) const {
    const Dims& dims = x.dims();
    const int64_t rank = x.rank();
    int64_t rows = 1, len = 1;
    for (int64_t d = 0; d < axis; ++d) rows *= dims[d];
    for (int64_t d = axis; d < rank; ++d) len *= dims[d];
    std::vector<int64_t> norm_offset(len, 0);
    for (int64_t j = 0; j < len; ++j) {
      int64_t rem = j;
      for (int64_t d = rank - 1; d >= axis; --d) {
        norm_offset[j] += (rem % dims[d]) * strides[d];
        rem /= dims[d];
      }
    }
    const C* px = x.data<C>();
    const C* ps = scale.data<C>();
    C* py = y.mutable_data<C>();
    const C eps = static_cast<C>(epsilon_);
    ParallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t lead = 0, rem = r;
        for (int64_t d = axis - 1; d >= 0; --d) {
          lead += (rem % dims[d]) * strides[d];
          rem /= dims[d];
        }
        const C* row = px + r * len;
        C sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += row[j] * row[j];
        const C inv = C(1) / std::sqrt(sum / static_cast<C>(len) + eps);
        C* out = py + r * len;
        for (int64_t j = 0; j < len; ++j) out[j] = row[j] * inv * ps[lead + norm_offset[j]];
      }
    });
  }

  int64_t axis_;
  float epsilon_;
  DataType stash_type_;
};

}  // namespace

void RegisterRmsNormalizationKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("RMSNormalization").Since(23).Build(), MakeFactory<RmsNormalization>());
}

}  // namespace onyx
