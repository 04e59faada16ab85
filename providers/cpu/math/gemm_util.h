// Row-major matrix multiply C = alpha * op(A) * op(B) + beta * C.
// float goes through oneDNN's sgemm; other types use a cache-friendly loop.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace onyx {

absl::Status Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

template <typename T>
void GemmReference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                   int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* crow = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) crow[j] = beta == T(0) ? T(0) : static_cast<T>(beta * crow[j]);
    for (int64_t p = 0; p < k; ++p) {
      T av = static_cast<T>(alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]));
      if (av == T(0)) continue;
      if (!trans_b) {
        const T* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      } else {
        for (int64_t j = 0; j < n; ++j) crow[j] += av * b[j * ldb + p];
      }
    }
  }
}

}  // namespace onyx
