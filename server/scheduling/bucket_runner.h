// RunOnBucket: runs one request on the smallest bucket session that holds it.
//
//   ASSIGN_OR_RETURN(InferenceResult result, RunOnBucket(model, request));
//
// A request of batch b runs on the smallest bucket B >= b: every input is padded
// with zero rows to B, the session runs, and every output is cut back to its
// first b rows. A model without buckets runs the request as given. The dynamic
// batcher will stack several requests with the same helpers (batch_util.h).
// Pure function over a thread-safe model: thread-safe.
#pragma once

#include "absl/status/statusor.h"
#include "server/scheduling/bucketed_model.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

// Errors: INVALID_ARGUMENT when the batch fits no bucket or an input is not a
// tensor with that many rows; INTERNAL when an output is not a tensor whose
// first dimension is the bucket size; the model's own errors as returned.
absl::StatusOr<InferenceResult> RunOnBucket(const BucketedModel& model,
                                            const InferenceRequest& request);

}  // namespace onyx::server
