#include "providers/cpu/contrib/norm_util.h"

namespace onyx {
namespace {

// Eight independent partial sums: the compiler may not reassociate one float
// accumulator, but eight lanes map onto one AVX register.
template <typename Term>
float LaneSum(int64_t n, Term term) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) lanes[j] += term(i + j);
  }
  float total = 0.f;
  for (; i < n; ++i) total += term(i);
  for (float lane : lanes) total += lane;
  return total;
}

}  // namespace

void RowMeanM2(const float* x, int64_t n, float* mean, float* m2) {
  const float mu = n == 0 ? 0.f : LaneSum(n, [x](int64_t i) { return x[i]; }) / static_cast<float>(n);
  *mean = mu;
  *m2 = LaneSum(n, [x, mu](int64_t i) {
    const float d = x[i] - mu;
    return d * d;
  });
}

float RowSumSquares(const float* x, int64_t n) {
  return LaneSum(n, [x](int64_t i) { return x[i] * x[i]; });
}

void NormalizeRow(const float* x, int64_t n, float mean, float inv, const float* scale, const float* shift, float* y) {
  if (shift != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i] + shift[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i];
  }
}

}  // namespace onyx
