// In-process load: the engine session onyxd would build for one batch bucket,
// run from `threads` threads for a fixed time, logging each Run()'s latency.
//
//   EngineLoadOptions o;
//   o.model_path = "repo/mlp/1/model.onnx"; o.batch = 8; o.threads = 2;
//   ASSIGN_OR_RETURN(LoadSummary s, RunEngineLoad(o));
//
// The session is created as server/models/bucket_sessions.cc does: every
// input's first dimension fixed to `batch` through input_shape_overrides, the
// given intra_op_threads, and one warm-up run. Feeds are built once and shared
// (the engine's ideal: no request parsing, no copies). Errors: the model does
// not load, has an input without a batch dimension, or a Run fails.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "bench/serving/latency_log.h"

namespace onyx::bench {

struct EngineLoadOptions {
  std::string model_path;
  int64_t batch = 1;         // rows per Run (the bucket size)
  int threads = 1;           // threads calling Run concurrently
  // As the model's config.yaml; 0 = onyxd's default for `threads` concurrent
  // runs: the CPU quota / threads, at least 1.
  int intra_op_threads = 0;
  double warmup_s = 0.5;
  double seconds = 3;
  size_t log_capacity = size_t{1} << 22;
};

absl::StatusOr<LoadSummary> RunEngineLoad(const EngineLoadOptions& options);

}  // namespace onyx::bench
