// ReducePlan: the loop structure shared by the reduction kernels. Input
// dimensions are merged into alternating kept/reduced blocks, so that every
// reduction becomes one of two shapes with a contiguous innermost loop:
//
//   inner_kept == false:  out[k]           = R_{r, l < inner} x[keep[k] + red[r] + l]
//   inner_kept == true:   out[k*inner + i] = R_{r}            x[keep[k] + red[r] + i]
//
//   ASSIGN_OR_RETURN(ReducePlan plan, ReducePlan::Make(x.dims(), axes));
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onyx/tensor.h"

namespace onyx {

struct ReducePlan {
  std::vector<int64_t> keep;  // input offset of each outer output position
  std::vector<int64_t> red;   // input offset of each reduced position (excluding `inner` when reduced)
  int64_t inner = 1;          // contiguous innermost block size
  bool inner_kept = true;
  int64_t reduced_count = 1;  // elements combined into each output
  Dims out_keepdims;          // output shape with reduced dims kept as 1
  Dims out_squeezed;          // output shape with reduced dims removed

  // `axes` already normalised to [0, rank) and free of duplicates; empty
  // reduces every dimension.
  static ReducePlan Make(absl::Span<const int64_t> dims, const std::vector<int64_t>& axes);
};

// Normalises `axes` for `rank`: negative values wrap, duplicates and
// out-of-range values are INVALID_ARGUMENT naming the axis.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(absl::Span<const int64_t> axes, int64_t rank);

}  // namespace onyx
