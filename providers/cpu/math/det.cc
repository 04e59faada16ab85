// Det: determinants of the trailing [M, M] matrices, by LU decomposition with
// partial pivoting in double precision.
#include <cmath>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"

namespace onyx {
namespace {

double Determinant(std::vector<double>& a, int64_t m) {
  double det = 1;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r) {
      if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) pivot = r;
    }
    if (a[pivot * m + c] == 0) return 0;
    if (pivot != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[pivot * m + k]);
      det = -det;
    }
    const double p = a[c * m + c];
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / p;
      for (int64_t k = c + 1; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
    }
  }
  return det;
}

class Det final : public OpKernel {
 public:
  explicit Det(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    const int64_t rank = x->rank();
    if (rank < 2 || x->dims()[rank - 1] != x->dims()[rank - 2]) {
      return ctx.Error("input must have shape [*, M, M], received " + DimsToString(x->dims()));
    }
    const int64_t m = x->dims()[rank - 1];
    Dims out_dims(x->dims().begin(), x->dims().end() - 2);
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x->type()));
    Tensor xf = UpcastToFloat(*x);
    Tensor yf = IsHalfLike(x->type()) ? Tensor::Allocate(DataType::kFloat, out_dims) : *y;
    absl::Status s = DispatchList(FloatCompute{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = xf.data<T>();
      T* py = yf.mutable_data<T>();
      ParallelFor(yf.num_elements(), 64, [&](int64_t begin, int64_t end) {
        std::vector<double> a(m * m);
        for (int64_t b = begin; b < end; ++b) {
          for (int64_t i = 0; i < m * m; ++i) a[i] = px[b * m * m + i];
          py[b] = static_cast<T>(Determinant(a, m));
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x->type())) DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterDetKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Det").Since(11).Types("T", kFloatTypes).Build(), MakeFactory<Det>());
}

}  // namespace onyx
