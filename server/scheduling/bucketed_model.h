// BucketedModel: what a scheduler runs — one model compiled once per batch size
// ("bucket") and, optionally, per size of each padded dimension (a symbolic
// dim such as a sequence length). The models/ layer implements it over
// onyx::InferenceSession (BucketSessions); tests implement it with plain
// functions.
//
// Sessions are laid out batch-major: with buckets [1, 4] and one padded dim of
// sizes [16, 32], session 0 is 1x16, 1 is 1x32, 2 is 4x16, 3 is 4x32
// (SessionIndex below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onyx/session.h"

namespace onyx::server {

// A dimension other than batch that requests are padded along.
struct PaddedDim {
  struct Use {
    std::string tensor;    // input or output name
    size_t axis = 0;       // in the full shape (batch included)
    double pad_value = 0;  // inputs only: what fills the padded positions
  };
  std::string name;            // the dim_param, for messages
  std::vector<int64_t> sizes;  // strictly ascending
  std::vector<Use> inputs;     // every input axis with this dim (non-empty)
  std::vector<Use> outputs;    // output axes sliced back to the true length
};

// Implementations must be thread-safe: workers call Run() concurrently.
class BucketedModel {
 public:
  virtual ~BucketedModel() = default;

  // Strictly ascending batch sizes, one compiled session each. Empty when the
  // model has no batch dimension; it then has exactly one session, index 0.
  virtual absl::Span<const int64_t> buckets() const = 0;

  // Optional: the padded dimensions; empty (the default) when none.
  virtual absl::Span<const PaddedDim> padded_dims() const { return {}; }

  // Runs session `bucket_index`: a session index as SessionIndex computes it
  // (the batch bucket's position only when there are no padded dims). For a
  // batched model every feed's first dimension equals the session's bucket,
  // and every padded axis its padded size. Returns the outputs named by
  // `output_names`, in that order. Errors: INTERNAL for an index with no
  // session; otherwise the engine run's status unchanged (INVALID_ARGUMENT
  // for feeds that do not fit, RESOURCE_EXHAUSTED when an arena reaches its
  // cap, ...); the scheduler adds the model's name.
  virtual absl::StatusOr<std::vector<onyx::Value>> Run(
      size_t bucket_index, const onyx::Feeds& feeds,
      const std::vector<std::string>& output_names) const = 0;
};

// The session of batch bucket `bucket_index` (0 for a model without buckets)
// and padded sizes `size_indexes` (one per padded dim, in padded_dims() order).
inline size_t SessionIndex(const BucketedModel& model, size_t bucket_index,
                           absl::Span<const size_t> size_indexes) {
  size_t index = bucket_index;
  const absl::Span<const PaddedDim> dims = model.padded_dims();
  for (size_t d = 0; d < dims.size(); ++d) index = index * dims[d].sizes.size() + size_indexes[d];
  return index;
}

}  // namespace onyx::server
