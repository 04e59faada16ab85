#include "server/models/model_stats.h"

#include <algorithm>

namespace onyx::server {

void ModelStats::RecordSuccess(const RequestTimings& t) {
  const uint64_t batch = static_cast<uint64_t>(std::max<int64_t>(t.batch_size, 1));
  absl::MutexLock lock(&mu_);
  stats_.last_inference_ms = std::max(stats_.last_inference_ms, t.end_ms);
  stats_.inference_count += batch;
  stats_.success.Add(t.total_ns);
  stats_.queue.Add(t.queue_ns);
  stats_.compute_input.Add(t.compute_input_ns);
  stats_.compute_infer.Add(t.compute_infer_ns);
  stats_.compute_output.Add(t.compute_output_ns);
}

void ModelStats::RecordExecution(int64_t rows, uint64_t run_ns) {
  const uint64_t batch = static_cast<uint64_t>(std::max<int64_t>(rows, 1));
  absl::MutexLock lock(&mu_);
  stats_.execution_count += 1;
  stats_.batches[batch].compute_infer.Add(run_ns);
}

void ModelStats::RecordFailure(uint64_t total_ns, uint64_t end_ms) {
  absl::MutexLock lock(&mu_);
  stats_.last_inference_ms = std::max(stats_.last_inference_ms, end_ms);
  stats_.fail.Add(total_ns);
}

ModelStatsSnapshot ModelStats::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace onyx::server
