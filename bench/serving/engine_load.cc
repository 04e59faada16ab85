#include "bench/serving/engine_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onyx/session.h"

namespace onyx::bench {
namespace {

using Clock = std::chrono::steady_clock;

absl::StatusOr<onyx::Feeds> MakeFeeds(const onyx::InferenceSession& session, const std::string& path) {
  onyx::Feeds feeds;
  uint32_t seed = 12345;  // the same values the served load sends
  for (const onyx::ValueInfo& input : session.inputs()) {
    std::vector<int64_t> dims = input.dims;
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": input '", input.name,
                                                       "' keeps a variable dimension after the batch"));
      }
    }
    onyx::Tensor tensor = onyx::Tensor::Allocate(input.type, dims);
    std::memset(tensor.mutable_raw(), 0, tensor.byte_size());
    if (input.type == onyx::DataType::kFloat) {
      float* data = tensor.mutable_data<float>();
      for (int64_t i = 0; i < tensor.num_elements(); ++i) {
        seed = seed * 1664525u + 1013904223u;
        data[i] = static_cast<float>(seed >> 8) / static_cast<float>(1 << 23) - 1.0f;
      }
    }
    feeds.emplace_back(input.name, onyx::Value(std::move(tensor)));
  }
  return feeds;
}

absl::StatusOr<std::unique_ptr<onyx::InferenceSession>> CreateBucketSession(const EngineLoadOptions& o) {
  // As onyxd: an unoptimised probe for the signature, then the bucket session.
  onyx::SessionOptions probe_options;
  probe_options.optimization_level = onyx::OptimizationLevel::kDisabled;
  auto probe = onyx::InferenceSession::Create(o.model_path, probe_options);
  if (!probe.ok()) return probe.status();
  onyx::SessionOptions options;
  options.intra_op_threads =
      o.intra_op_threads > 0 ? o.intra_op_threads : std::max(1, onyx::ProcessCpuQuota() / std::max(1, o.threads));
  options.model_name = o.model_path;
  for (const onyx::ValueInfo& input : (*probe)->inputs()) {
    if (input.dims.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(o.model_path, ": input '", input.name, "' has no batch dimension"));
    }
    std::vector<int64_t> dims(input.dims.size(), -1);
    dims[0] = o.batch;
    options.input_shape_overrides[input.name] = std::move(dims);
  }
  return onyx::InferenceSession::Create(o.model_path, options);
}

}  // namespace

absl::StatusOr<LoadSummary> RunEngineLoad(const EngineLoadOptions& options) {
  // Created on a thread of its own, as onyxd loads models: a thread that has
  // run an OpenMP parallel region (constant folding may) keeps its team, and
  // an idle team beside the timed ones makes libgomp put every team to sleep
  // between regions.
  absl::StatusOr<std::unique_ptr<onyx::InferenceSession>> session =
      absl::InternalError("session creation did not run");
  std::thread([&] { session = CreateBucketSession(options); }).join();
  if (!session.ok()) return session.status();
  auto feeds = MakeFeeds(**session, options.model_path);
  if (!feeds.ok()) return feeds.status();
  const onyx::RunOptions run_options;
  // No warm-up run here: the timed threads warm up in the warm-up window. A
  // thread that has run a parallel region keeps its OpenMP team, and a team
  // left idle beside the timed ones makes libgomp put every team to sleep
  // between regions (a run of an mlp at batch 64 took 160 µs instead of 35).

  LatencyLog log(options.log_capacity);
  std::atomic<int64_t> errors{0};
  std::mutex error_mu;
  std::string first_error;
  const Clock::time_point window_start =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.warmup_s));
  const Clock::time_point window_end =
      window_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.seconds));
  const onyx::InferenceSession& s = **session;
  auto worker = [&] {
    while (true) {
      const Clock::time_point start = Clock::now();
      if (start >= window_end) return;
      auto outputs = s.Run(run_options, *feeds, {});
      const Clock::time_point end = Clock::now();
      if (!outputs.ok() || outputs->size() != s.outputs().size()) {
        if (errors.fetch_add(1) == 0) {
          std::lock_guard<std::mutex> lock(error_mu);
          first_error = outputs.ok() ? "wrong number of outputs" : std::string(outputs.status().message());
        }
      } else if (end >= window_start && end <= window_end) {
        log.Add(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, options.threads); ++t) threads.emplace_back(worker);
  for (std::thread& thread : threads) thread.join();

  LoadSummary summary =
      Summarize(log, options.batch, std::chrono::duration<double>(window_end - window_start).count());
  summary.errors = errors.load();
  summary.first_error = first_error;
  return summary;
}

}  // namespace onyx::bench
