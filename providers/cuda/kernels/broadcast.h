// Host-side planning of the shaped kernels' arguments: numpy broadcasting
// (collapsed to the fewest dimensions), strided copies (Transpose, Slice,
// Expand), and the choice of the tiled transpose. Pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onyx/tensor.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {

// The numpy broadcast of `inputs`' dims; INVALID_ARGUMENT listing them when
// they do not broadcast.
absl::StatusOr<Dims> BroadcastShape(const std::vector<absl::Span<const int64_t>>& inputs);

// Arguments of LaunchBinary/LaunchWhere for 1 to 3 inputs broadcast to
// `out`; INVALID_ARGUMENT when more than kMaxRank dims remain after merging.
absl::StatusOr<BroadcastArgs> MakeBroadcastArgs(absl::Span<const int64_t> out,
                                                const std::vector<absl::Span<const int64_t>>& inputs);

// A strided copy reading x[base + sum_k index_k * in_strides[k]] for every
// index of `out_dims`, with dims of 1 dropped and dims merged where the
// input is contiguous across them; INVALID_ARGUMENT above kMaxRank dims.
absl::StatusOr<StridedCopyArgs> MakeStridedCopy(absl::Span<const int64_t> out_dims,
                                                absl::Span<const int64_t> in_strides, int64_t base);

// y = x broadcast to out_dims (x's dims right-aligned, numpy rules checked by
// the caller).
absl::StatusOr<StridedCopyArgs> MakeExpandCopy(absl::Span<const int64_t> x_dims, absl::Span<const int64_t> out_dims);

// Moves the innermost contiguous run of `args` in wider units (up to 16
// bytes) when sizes, strides and both pointers allow, updating elem_size.
void WidenInnermost(StridedCopyArgs& args, size_t& elem_size, const void* x, const void* y);

// How to run a Transpose of x (dims, perm) with elements of elem_size bytes.
struct TransposePlan {
  enum class Kind { kCopy, kTiled, kStrided } kind = Kind::kCopy;
  int64_t batch = 1, rows = 1, cols = 1;  // kTiled: [batch, rows, cols] -> [batch, cols, rows]
  StridedCopyArgs strided;                // kStrided
};
absl::StatusOr<TransposePlan> PlanTranspose(absl::Span<const int64_t> dims, absl::Span<const int64_t> perm,
                                            size_t elem_size);

}  // namespace onyx::cuda_ops
