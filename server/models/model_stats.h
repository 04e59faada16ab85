// ModelStats: the counters behind the ModelStatistics RPC for one loaded model
// version (Triton's statistics extension).
//
//   RequestTimings t;
//   t.batch_size = 4;  t.queue_ns = result.queue_time;  t.end_ms = NowMs();
//   model.stats().RecordSuccess(t);                     // by the RPC layer
//   model.stats().RecordExecution(6, run_ns);           // by the model's scheduler
//   ModelStatsSnapshot s = model.stats().Snapshot();   // s.inference_count == 4
//
// inference_count adds each successful request's batch size (1 for a model
// without a batch dimension); execution_count adds one per engine run, however
// many requests the scheduler merged into it. `queue` is the time a request
// waited in the scheduler's queue, `compute_infer` the engine run of its batch
// (both per request). batch_stats are per executed batch size (rows merged
// into one run, before padding): compute_infer counts runs and their time;
// compute_input and compute_output stay 0 there, being per request.
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
  StatDuration queue;           // enqueue until a worker took the request
  StatDuration compute_input;   // decode and validate
  StatDuration compute_infer;   // the engine run of the request's batch
  StatDuration compute_output;  // encode the reply
  std::map<uint64_t, BatchStats> batches;  // by executed batch size (rows per run)
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
  // One engine run of `rows` rows (0 for a model without a batch dimension,
  // counted as 1) that took `run_ns`.
  void RecordExecution(int64_t rows, uint64_t run_ns);
  // A request for this model that failed after it was received (bad input,
  // queue full, engine error).
  void RecordFailure(uint64_t total_ns, uint64_t end_ms);
  ModelStatsSnapshot Snapshot() const;

 private:
  mutable absl::Mutex mu_;
  ModelStatsSnapshot stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server
