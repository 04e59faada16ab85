// ModelConfig: per-model serving settings from <repo>/<model>/config.yaml.
//
//   ASSIGN_OR_RETURN(ModelConfigFile file, LoadModelConfigFile(dir + "/config.yaml"));
//   ASSIGN_OR_RETURN(ModelConfig config, ResolveModelConfig(file, batch_dim_problem, path));
//
// The file is optional, and so is every key in it:
//   max_batch_size: 8            # 0 = model has no batch dimension
//   buckets: [1, 2, 4, 8]        # batch sizes a session is built for
//   dynamic_batching:
//     max_queue_delay_us: 200
//     max_queue_size: 256
//     max_inflight_bytes: 0      # request bytes admitted, not yet answered; 0 = no cap
//   instance_count: 1
//   version_policy: {latest: 2}  # or {specific: [1, 3]} or all; default latest 1
//   padded_dims:                 # symbolic dims other than batch, padded to buckets
//     sequence:                  # a dim_param of the model's inputs
//       sizes: [16, 32, 64]
//       pad_values: {input_ids: 0}   # per input; default 0
//   inter_op_threads: 1          # engine session options of every bucket session
//   enable_mem_pattern: true
//   mem_pattern_cache_size: 16
//   arena_limit_bytes: 0         # cap on this version's arena; 0 = none
//   warmup:
//     runs: 2                    # per bucket session at load; 0 = none
//     inputs: zeros              # zeros | random | <dir relative to the model directory>
// Parsing checks each value on its own; ResolveModelConfig fills what the file
// left out from the model itself and checks the values against each other.
// Errors are INVALID_ARGUMENT naming the file, the key, expected vs received.
// Plain data and pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onyx::server {

// max_batch_size when the file does not say and the model has a batch dimension.
inline constexpr int64_t kDefaultMaxBatchSize = 8;

struct DynamicBatchingConfig {
  // Longest the oldest queued request waits for later ones to merge with; a
  // batch goes at once when its rows reach max_batch_size or no other run of
  // the model is in progress.
  int64_t max_queue_delay_us = 0;
  // Requests queued beyond this are refused with RESOURCE_EXHAUSTED.
  int64_t max_queue_size = 256;
  // Request bytes (as received) of this version admitted and not yet
  // answered, queued or running; a request that would pass it is refused with
  // RESOURCE_EXHAUSTED. 0: no cap (the server's max_inflight_bytes still applies).
  int64_t max_inflight_bytes = 0;
};

// Which version directories the repository serves at once.
struct VersionPolicy {
  enum class Kind { kLatest, kSpecific, kAll };
  Kind kind = Kind::kLatest;
  int64_t latest = 1;             // kLatest: the `latest` highest versions
  std::vector<int64_t> specific;  // kSpecific: strictly ascending
};

// Versions of `available` (any order) that `policy` selects, ascending. For
// kSpecific the listed versions are returned whether on disk or not.
std::vector<int64_t> SelectVersions(const VersionPolicy& policy, std::vector<int64_t> available);

// One padded dimension: requests are padded along it to the smallest size that
// holds them; outputs with the same dim_param are sliced back.
struct PaddedDimConfig {
  std::vector<int64_t> sizes;                // strictly ascending, >= 1
  std::map<std::string, double> pad_values;  // by input name; others pad with 0
};

// How each bucket session is run before the model serves (BucketSessions).
struct WarmupConfig {
  // Two runs reach the steady state: the first learns the memory pattern, the
  // second reserves its arena block, so the first request grows nothing.
  static constexpr int64_t kDefaultRuns = 2;
  int64_t runs = kDefaultRuns;
  // "zeros", "random", or a directory of sample tensors relative to the model
  // directory (never absolute).
  std::string inputs = "zeros";
};

struct ModelConfig {
  // 0: the model has no batch dimension and runs requests as given.
  int64_t max_batch_size = 0;
  // Strictly ascending, last == max_batch_size; empty iff max_batch_size == 0.
  std::vector<int64_t> buckets;
  DynamicBatchingConfig dynamic_batching;
  // Worker threads (concurrent runs) for this model.
  int64_t instance_count = 1;
  // Engine session settings of every bucket session.
  std::vector<std::string> providers = {"cpu"};
  // A listed provider this host cannot offer fails the load instead of
  // falling back to CPU (counted).
  bool require_providers = false;
  // Custom-operator libraries, as written (relative = from the model's folder).
  std::vector<std::string> custom_op_libraries;
  std::string optimization_level = "all";
  int64_t max_cpu_fallback_nodes = -1;  // -1: no gate
  int64_t intra_op_threads = 0;         // 0: DefaultIntraOpThreads()
  int64_t inter_op_threads = 1;         // 0 or 1: sequential
  bool enable_mem_pattern = true;
  int64_t mem_pattern_cache_size = 16;
  // Cap on the reserved bytes of each model version's own arena; 0 = none.
  int64_t arena_limit_bytes = 0;
  WarmupConfig warmup;
  VersionPolicy version_policy;
  // By dim_param name; checked against the model's inputs when it loads.
  std::map<std::string, PaddedDimConfig> padded_dims;
};

// The keys a config.yaml set; std::nullopt where it said nothing.
struct ModelConfigFile {
  std::optional<int64_t> max_batch_size;
  std::optional<std::vector<int64_t>> buckets;
  std::optional<int64_t> max_queue_delay_us;
  std::optional<int64_t> max_queue_size;
  std::optional<int64_t> max_inflight_bytes;
  std::optional<int64_t> instance_count;
  std::optional<std::vector<std::string>> providers;
  std::optional<bool> require_providers;
  std::optional<std::vector<std::string>> custom_op_libraries;
  std::optional<std::string> optimization_level;
  std::optional<int64_t> max_cpu_fallback_nodes;
  std::optional<int64_t> intra_op_threads;
  std::optional<int64_t> inter_op_threads;
  std::optional<bool> enable_mem_pattern;
  std::optional<int64_t> mem_pattern_cache_size;
  std::optional<int64_t> arena_limit_bytes;
  std::optional<int64_t> warmup_runs;
  std::optional<std::string> warmup_inputs;
  std::optional<VersionPolicy> version_policy;
  std::optional<std::map<std::string, PaddedDimConfig>> padded_dims;
};

// Parses YAML text; `source` names the file in messages.
absl::StatusOr<ModelConfigFile> ParseModelConfig(absl::string_view text, absl::string_view source);

// Reads and parses `path`; a missing file is an empty ModelConfigFile.
absl::StatusOr<ModelConfigFile> LoadModelConfigFile(const std::string& path);

// Powers of two below max_batch_size, then max_batch_size: 8 → [1,2,4,8],
// 6 → [1,2,4,6]. Empty for 0.
std::vector<int64_t> DefaultBuckets(int64_t max_batch_size);

// The intra-op threads of each engine run when config.yaml leaves
// intra_op_threads at 0: the CPU quota shared out among the model's concurrent
// runs (instance_count workers, each with inter_op_threads lanes), at least 1.
// More threads than cores would not run faster: the OpenMP teams of the other
// runs would be put to sleep and woken at every parallel region.
int64_t DefaultIntraOpThreads(int64_t cpu_quota, int64_t instance_count, int64_t inter_op_threads);

// The threads each engine run of a model uses: its intra_op_threads, or
// DefaultIntraOpThreads() when that is 0.
int64_t EffectiveIntraOpThreads(const ModelConfig& config, int64_t cpu_quota);

// Completes `file` for a model. `batch_dim_problem` is empty when every input of
// the model starts with a symbolic dimension, else says why not ("input 'x' has
// fixed first dimension 3"); batching is then off by default and an explicit
// max_batch_size > 0 is an error.
absl::StatusOr<ModelConfig> ResolveModelConfig(const ModelConfigFile& file,
                                               absl::string_view batch_dim_problem,
                                               absl::string_view source);

}  // namespace onyx::server
