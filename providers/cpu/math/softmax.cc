// Softmax, LogSoftmax and Hardmax. Opset 13 normalises along one axis; earlier
// opsets coerce the input to 2-D at `axis` and normalise each row.
// float16/bfloat16 compute in float; sums accumulate in double. Softmax over
// contiguous float rows takes float exps; everything else computes in double.
#include <cmath>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

enum class Norm { kSoftmax, kLogSoftmax, kHardmax };

template <Norm kind>
class Softmax final : public OpKernel {
 public:
  explicit Softmax(const OpKernelInfo& info)
      : opset13_(info.node().since_version >= 13), axis_(info.AttrOr<int64_t>("axis", opset13_ ? -1 : 1)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "input"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    const int64_t rank = x->rank();
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (rank == 0) axis = 0;
    // Before opset 13 axis == rank is allowed (rows of one element).
    const int64_t max_axis = opset13_ ? rank - 1 : rank;
    if (axis < 0 || (rank > 0 && axis > max_axis)) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", rank));
    }
    int64_t outer = 1, len = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis) outer *= x->dims()[i];
      else if (i == axis) len = x->dims()[i];
      else inner *= x->dims()[i];
    }
    if (!opset13_) {  // rows are everything from axis on
      len *= inner;
      inner = 1;
    }
    Tensor xf = UpcastToFloat(*x);
    Tensor yf = IsHalfLike(x->type()) ? Tensor::Allocate(DataType::kFloat, x->dims()) : *y;
    absl::Status s = DispatchList(FloatCompute{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = xf.data<T>();
      T* py = yf.mutable_data<T>();
      ParallelFor(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)),
                  [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* src = px + (r / inner) * len * inner + r % inner;
          T* dst = py + (r / inner) * len * inner + r % inner;
          if constexpr (std::is_same_v<T, float> && kind == Norm::kSoftmax) {
            if (inner == 1 && len > 0) {
              // Contiguous float rows (attention scores, classifier outputs):
              // max, exps (1 ulp) with their sum, and the scaling in three
              // vector passes, instead of two double exps per element;
              // within a few float ulps of the double path.
              simd::SoftmaxRow(src, nullptr, dst, len);
              continue;
            }
          }
          double max = -INFINITY;
          int64_t arg = 0;
          for (int64_t i = 0; i < len; ++i) {
            if (src[i * inner] > max) {
              max = src[i * inner];
              arg = i;
            }
          }
          if constexpr (kind == Norm::kHardmax) {
            for (int64_t i = 0; i < len; ++i) dst[i * inner] = T(i == arg ? 1 : 0);
          } else {
            if (std::isinf(max)) max = 0;
            double sum = 0;
            for (int64_t i = 0; i < len; ++i) sum += std::exp(static_cast<double>(src[i * inner]) - max);
            const double log_sum = std::log(sum);
            for (int64_t i = 0; i < len; ++i) {
              const double v = static_cast<double>(src[i * inner]) - max;
              dst[i * inner] = static_cast<T>(kind == Norm::kLogSoftmax ? v - log_sum : std::exp(v) / sum);
            }
          }
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x->type())) DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }

 private:
  bool opset13_;
  int64_t axis_;
};

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Softmax").Since(1).Types("T", kFloatTypes).Build(),
             MakeFactory<Softmax<Norm::kSoftmax>>());
  r.Register(KernelDefBuilder("LogSoftmax").Since(1).Types("T", kFloatTypes).Build(),
             MakeFactory<Softmax<Norm::kLogSoftmax>>());
  r.Register(KernelDefBuilder("Hardmax").Since(1).Types("T", kFloatTypes).Build(),
             MakeFactory<Softmax<Norm::kHardmax>>());
}

}  // namespace onyx
