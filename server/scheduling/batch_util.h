// Row operations on the batch (first) dimension of tensors: the padding and
// slicing that let a request of batch b run on a session built for bucket B >= b,
// and let the dynamic batcher stack several requests into one run.
//
//   ASSIGN_OR_RETURN(size_t i, ChooseBucket({1, 2, 4, 8}, 3));       // i == 2 (B = 4)
//   ASSIGN_OR_RETURN(Tensor padded, ConcatAndPad({x}, 4));            // rows 3..4 zero
//   ASSIGN_OR_RETURN(Tensor y0, SliceRows(model_output, 0, 3));      // back to 3 rows
//   ASSIGN_OR_RETURN(Tensor p, PadAxis(ids, 1, 16, 0.0));            // [b, 5] -> [b, 16]
//   ASSIGN_OR_RETURN(Tensor s, SliceAxis(p_out, 1, 5));               // [b, 16] -> [b, 5]
//
// Pure functions: thread-safe. Results own fresh storage unless stated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onyx/tensor.h"

namespace onyx::server {

// Index of the smallest bucket >= batch_size in strictly ascending `buckets`.
// INVALID_ARGUMENT when batch_size < 1 or larger than the last bucket.
absl::StatusOr<size_t> ChooseBucket(absl::Span<const int64_t> buckets, int64_t batch_size);

// Stacks `parts` along dimension 0 and appends zero (empty-string) rows up to
// `rows`. Every part needs rank >= 1 and the same type and trailing dims.
// A single part that already has `rows` rows is returned as is (shared buffer).
// INVALID_ARGUMENT on mismatched parts or when they hold more than `rows` rows.
absl::StatusOr<onyx::Tensor> ConcatAndPad(absl::Span<const onyx::Tensor> parts, int64_t rows);

// Rows [begin, begin + count) of `tensor` (rank >= 1). The whole tensor is
// returned as is (shared buffer). INVALID_ARGUMENT when out of range.
absl::StatusOr<onyx::Tensor> SliceRows(const onyx::Tensor& tensor, int64_t begin, int64_t count);

// `tensor` with dimension `axis` extended to `size` (>= its length); the new
// positions hold `pad_value` converted to the tensor's type ("" for strings,
// value != 0 for bool). Returned as is (shared buffer) when already `size`.
// INVALID_ARGUMENT when axis is out of range or the dim is longer than size.
absl::StatusOr<onyx::Tensor> PadAxis(const onyx::Tensor& tensor, size_t axis, int64_t size,
                                     double pad_value);

// The first `length` positions of dimension `axis` of `tensor`. Returned as is
// (shared buffer) when already `length`. INVALID_ARGUMENT when out of range.
absl::StatusOr<onyx::Tensor> SliceAxis(const onyx::Tensor& tensor, size_t axis, int64_t length);

}  // namespace onyx::server
