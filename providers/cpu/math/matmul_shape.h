// MatMulShape: numpy matmul geometry shared by MatMul, MatMulInteger and
// QLinearMatMul. 1-D operands are promoted (and the promoted dimension dropped
// from the output); leading batch dimensions broadcast.
//
//   ASSIGN_OR_RETURN(MatMulShape s, MatMulShape::Make(a.dims(), b.dims()));
//   for (int64_t i = 0; i < s.batches; ++i)
//     multiply A + s.a_offset[i] * s.m * s.k by B + s.b_offset[i] * s.k * s.n
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "onyx/tensor.h"

namespace onyx {

struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  int64_t batches = 1;
  Dims out;                        // output dims
  std::vector<int64_t> a_offset;   // per output batch: index of A's matrix
  std::vector<int64_t> b_offset;   // per output batch: index of B's matrix
  bool b_shared = false;           // B is one matrix and A's batches are contiguous

  // INVALID_ARGUMENT naming both shapes when they do not multiply.
  static absl::StatusOr<MatMulShape> Make(absl::Span<const int64_t> a, absl::Span<const int64_t> b);
};

}  // namespace onyx
