// BucketedModel: what a scheduler runs — one model compiled once per batch size
// ("bucket"). The models/ layer implements it over onyx::InferenceSession; tests
// implement it with plain functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onyx/session.h"

namespace onyx::server {

// Implementations must be thread-safe: workers call Run() concurrently.
class BucketedModel {
 public:
  virtual ~BucketedModel() = default;

  // Strictly ascending batch sizes, one compiled session each. Empty when the
  // model has no batch dimension; it then has exactly one session, index 0.
  virtual absl::Span<const int64_t> buckets() const = 0;

  // Runs the session of bucket `bucket_index`. For a batched model every feed's
  // first dimension equals buckets()[bucket_index]. Returns the outputs named by
  // `output_names`, in that order. Errors: INVALID_ARGUMENT for bad feeds,
  // INTERNAL for engine failures.
  virtual absl::StatusOr<std::vector<onyx::Value>> Run(
      size_t bucket_index, const onyx::Feeds& feeds,
      const std::vector<std::string>& output_names) const = 0;
};

}  // namespace onyx::server
