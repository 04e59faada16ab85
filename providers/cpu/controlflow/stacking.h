// Slicing a tensor along an axis and stacking slices back, for Loop and Scan.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "onyx/tensor.h"

namespace onyx {

// The sub-tensor at `index` along `axis`, with that axis removed (a copy).
Tensor TakeAlongAxis(const Tensor& tensor, int64_t axis, int64_t index);

// Stacks equally shaped `slices` along a new `axis` (0..rank); in reverse order
// when `reverse`. With no slices the result has `empty_dims` with a 0 inserted
// at `axis`. INVALID_ARGUMENT when slice shapes or types differ.
absl::StatusOr<Tensor> StackAlongAxis(const std::vector<Tensor>& slices, int64_t axis, bool reverse,
                                      DataType empty_type, const Dims& empty_dims);

}  // namespace onyx
