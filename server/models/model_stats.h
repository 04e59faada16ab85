// ModelStats: the counters behind the ModelStatistics RPC for one loaded model
// version (Triton's statistics extension).
//
//   RequestTimings t;
//   t.batch_size = 4;  t.compute_input_ns = ...;  t.end_ms = NowMs();
//   model.stats().RecordSuccess(t);
//   ModelStatsSnapshot s = model.stats().Snapshot();   // s.inference_count == 4
//
// inference_count adds each request's batch size (1 for a model without a batch
// dimension); execution_count adds one per request the server hands to the
// scheduler (how the scheduler groups them into engine runs is its business).
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace onyx::server {

struct StatDuration {
  uint64_t count = 0;
  uint64_t ns = 0;
  void Add(uint64_t duration_ns) {
    ++count;
    ns += duration_ns;
  }
};

struct BatchStats {
  StatDuration compute_input;
  StatDuration compute_infer;
  StatDuration compute_output;
};

struct ModelStatsSnapshot {
  uint64_t last_inference_ms = 0;  // ms since the epoch; 0: never
  uint64_t inference_count = 0;
  uint64_t execution_count = 0;
  StatDuration success;  // whole request, receipt to reply
  StatDuration fail;
  StatDuration queue;
  StatDuration compute_input;   // decode and validate
  StatDuration compute_infer;   // enqueue to result
  StatDuration compute_output;  // encode the reply
  std::map<uint64_t, BatchStats> batches;  // by batch size
};

// What one successful request took.
struct RequestTimings {
  int64_t batch_size = 0;  // 0 (no batch dimension) counts as 1
  uint64_t total_ns = 0;
  uint64_t queue_ns = 0;
  uint64_t compute_input_ns = 0;
  uint64_t compute_infer_ns = 0;
  uint64_t compute_output_ns = 0;
  uint64_t end_ms = 0;  // ms since the epoch
};

class ModelStats {
 public:
  void RecordSuccess(const RequestTimings& timings);
  // A request for this model that failed after it was received (bad input,
  // queue full, engine error).
  void RecordFailure(uint64_t total_ns, uint64_t end_ms);
  ModelStatsSnapshot Snapshot() const;

 private:
  mutable absl::Mutex mu_;
  ModelStatsSnapshot stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server
