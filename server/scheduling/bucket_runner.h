// RunOnBucket / RunBatchOnBucket: run one request, or several stacked into one
// batch, on the smallest bucket session that holds them.
//
//   ASSIGN_OR_RETURN(InferenceResult result, RunOnBucket(model, request));
//   if (CanShareBatch(a, b)) {
//     ASSIGN_OR_RETURN(std::vector<InferenceResult> results, RunBatchOnBucket(model, {&a, &b}));
//   }
//
// Requests of batch b1..bn run on the smallest bucket B >= b1 + ... + bn: every
// input is stacked along dimension 0 in request order and padded with zero rows
// to B, the session runs once, and request i gets exactly its own rows of every
// output back. A model without buckets runs one request as given.
// Padded dims (BucketedModel::padded_dims): each request's inputs are first
// padded along every padded axis to the smallest size holding its length
// (pad value per input), and outputs with that dim are sliced back to the
// request's true length; only requests padded to the same sizes share a batch.
// Pure functions over a thread-safe model: thread-safe.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/scheduling/bucketed_model.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

// Errors: INVALID_ARGUMENT when the batch fits no bucket, a padded dim is
// longer than its largest size (naming input, dim and limit), or an input is not a
// tensor with that many rows; INTERNAL when an output is not a tensor whose
// first dimension is the bucket size; the model's own errors as returned.
absl::StatusOr<InferenceResult> RunOnBucket(const BucketedModel& model,
                                            const InferenceRequest& request);

// True when `a` and `b` may run in one batch: both batched (batch_size >= 1),
// the same input names, and for each input the same type, rank and dims after
// the first; and the same output_names in the same order.
bool CanShareBatch(const InferenceRequest& a, const InferenceRequest& b);

// CanShareBatch for `model`: as above, except that dims on padded axes may
// differ as long as both requests pad to the same size of every padded dim.
bool CanShareBatch(const BucketedModel& model, const InferenceRequest& a,
                   const InferenceRequest& b);

// For each padded dim of `model` (in order), the index into its sizes that
// `request` pads to. INVALID_ARGUMENT naming the input, dim and limit when the
// request is longer than the largest size, or its inputs disagree on the length.
absl::StatusOr<std::vector<size_t>> PaddedSizeIndexes(const BucketedModel& model,
                                                      const InferenceRequest& request);

// Runs `requests` (non-empty, pairwise CanShareBatch, or a single request) as
// one batch; results are parallel to `requests`. Errors as RunOnBucket's; an
// error fails the whole batch.
absl::StatusOr<std::vector<InferenceResult>> RunBatchOnBucket(
    const BucketedModel& model, absl::Span<const InferenceRequest* const> requests);

}  // namespace onyx::server
