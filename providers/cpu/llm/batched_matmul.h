// A batch of float matrix products in one oneDNN matmul primitive:
//   c[i] = a[i] x b[i] for i < batch, a[i] m x k, b[i] k x n, c dense [batch, m, n].
// Operands are read through element strides (batch, row, column), so a
// transposed operand is a stride swap, not a copy:
//
//   // scores[h] = q[h] (s x d) x k[h]^T, k stored [heads, t, d]
//   RETURN_IF_ERROR(BatchedMatMul(heads, s, t, d, q, {s * d, d, 1}, k, {t * d, 1, d}, scores));
//
// The primitive is created per call; oneDNN's primitive cache makes that a
// lookup for shapes seen before. Runs on the calling thread's intra-op thread
// count. Thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace onyx {

struct MatrixStrides {
  int64_t batch = 0, row = 0, col = 1;
};

absl::Status BatchedMatMul(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a, MatrixStrides a_strides,
                           const float* b, MatrixStrides b_strides, float* c);

}  // namespace onyx
