// InferenceSession: one compiled ONNX model, ready to Run.
//
//   onyx::SessionOptions options;
//   options.providers = {"cpu"};
//   ASSIGN_OR_RETURN(auto session, onyx::InferenceSession::Create("model.onnx", options));
//   onyx::Feeds feeds = {{"input", onyx::Value(input_tensor)}};
//   ASSIGN_OR_RETURN(std::vector<onyx::Value> outputs,
//                    session->Run(onyx::RunOptions(), feeds, {"probabilities"}));
//
// Create() does all the expensive work once: parse, check, shape inference,
// graph rewriting, partitioning over the providers, kernel creation and planning.
// Run() only executes. Errors are absl::Status values naming the model, node or
// input concerned; nothing throws and no input aborts the process.
// Thread-safe: Run() may be called concurrently from many threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "onyx/tensor.h"

namespace onyx {

enum class OptimizationLevel { kDisabled, kBasic, kExtended, kAll };

// Parses "disabled" | "basic" | "extended" | "all".
absl::StatusOr<OptimizationLevel> ParseOptimizationLevel(std::string_view text);
const char* OptimizationLevelName(OptimizationLevel level);

// How many CPUs this process may use (its affinity mask and cgroup CPU limit):
// the default of SessionOptions::intra_op_threads.
int ProcessCpuQuota();

struct SessionOptions {
  // Graph rewriting; kAll by default.
  OptimizationLevel optimization_level = OptimizationLevel::kAll;
  // When set, Create() writes the rewritten graph to this ONNX file.
  std::string optimized_model_path;
  // Execution providers in priority order, each "name" or "name:key=value;key=value"
  // (provider options); "cpu" is always the last, as the fallback.
  std::vector<std::string> providers = {"cpu"};
  // Create() fails with the partition report when more nodes than this fall back
  // to CPU from a preferred provider; negative disables the gate.
  int64_t max_cpu_fallback_nodes = -1;
  // Fixes input dimensions (per input name, -1 keeps a dim free) before shape
  // inference, e.g. a server's shape bucket.
  std::map<std::string, std::vector<int64_t>> input_shape_overrides;
  // Threads for data-parallel kernels; 0 = the CPU quota of this process.
  int intra_op_threads = 0;
  // CPU lanes running independent branches of the graph side by side (1 =
  // sequential). With more than one lane, or a provider with its own stream,
  // the session runs one request at a time and memory patterns are off.
  int inter_op_threads = 1;
  // Name used in log lines and errors.
  std::string model_name;
  // Where external-data weight files are looked up when created from bytes.
  std::string model_dir;
  // Learn each input-shape signature's memory pattern on its first run and
  // serve later runs' intermediates from one arena block laid out by it.
  bool enable_mem_pattern = true;
  // Patterns kept per session (least recently used dropped beyond this).
  int mem_pattern_cache_size = 16;
  // Record every run's per-node timings into a Chrome trace, written by
  // EndProfiling() to "<profile_file_prefix>_<n>.json".
  bool enable_profiling = false;
  std::string profile_file_prefix = "onyx_profile";
  // Sessions with the same non-empty group share one copy of identical weights
  // (e.g. a server's shape-bucket sessions of one model version).
  std::string shared_weights_group;
  // Arena of this session's host tensors. Sessions with the same non-empty
  // group share one arena of their own (a server uses "<model>/<version>"),
  // kept while any of them or any tensor from it lives, then freed; "" is
  // the process-wide shared arena. See onyx/memory.h for its stats.
  std::string arena_group;
  // Cap on the group arena's reserved bytes; 0 = none. A run that would pass
  // it fails with RESOURCE_EXHAUSTED naming the group and the limit. Every
  // session of a group must ask for the same limit (Create() fails with
  // FAILED_PRECONDITION otherwise); the shared arena ("") takes none.
  int64_t arena_limit_bytes = 0;
};

// What memory planning achieved for the most recent learned pattern.
struct MemoryPlanInfo {
  int64_t patterns = 0;             // patterns cached
  int64_t planned_bytes = 0;        // one block holding every planned intermediate
  int64_t without_reuse_bytes = 0;  // the same buffers without any reuse
};

// Log detail for one run; kDefault follows the engine logger's level.
enum class LogLevel { kDefault, kTrace, kDebug, kInfo, kWarn, kError, kOff };

struct RunOptions {
  std::string run_tag;
  // kTrace logs every node with its time; kDebug the run's start and end.
  LogLevel log_level = LogLevel::kDefault;
  // After this run, return the arenas' fully free regions to the system
  // (for a burst of large requests; steady traffic keeps them warm).
  bool shrink_arena_at_end = false;
  // When set and true, Run() stops between nodes and returns CANCELLED.
  const std::atomic<bool>* terminate = nullptr;
};

// Shape and type of a graph input or output. dims use -1 for a dimension that
// is not fixed; dim_params holds its symbolic name ("batch") or "".
struct ValueInfo {
  enum class Kind { kTensor, kSequence, kOptional };
  std::string name;
  Kind kind = Kind::kTensor;
  DataType type = DataType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
};

struct FallbackNode {
  std::string node;      // node name (or "<op_type>#<index>" when unnamed)
  std::string op_type;
  std::string provider;  // the preferred provider that declined it
  std::string reason;    // the kernel registry's explanation
};

// How the graph was split over the providers.
struct PartitionReport {
  std::map<std::string, int64_t> nodes_per_provider;
  int64_t partitions = 0;     // maximal runs of consecutive nodes on one provider
  int64_t memcpy_nodes = 0;   // copies inserted at device boundaries
  std::vector<FallbackNode> fallback_nodes;
  std::string ToString() const;
};

// Upper bounds (ns) of the kernel latency histogram every node keeps: 1 µs to
// 1 s, roughly 1-2.5-5 per decade. KernelStats::bucket_counts has one count per
// bound plus a last one for slower runs (+Inf).
inline constexpr int64_t kKernelLatencyBoundsNs[] = {
    1'000,      2'500,      5'000,      10'000,      25'000,      50'000,      100'000,
    250'000,    500'000,    1'000'000,  2'500'000,   5'000'000,   10'000'000,  25'000'000,
    50'000'000, 100'000'000, 250'000'000, 500'000'000, 1'000'000'000};
inline constexpr size_t kKernelLatencyBuckets = std::size(kKernelLatencyBoundsNs) + 1;

// Latency of one node of the main graph over all runs of a session. Counted
// always (relaxed atomics, no lock or allocation per run).
struct KernelStats {
  std::string node;      // node label, e.g. "Conv 'conv1'"
  std::string op_type;
  std::string provider;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
  // Runs per latency bucket (not cumulative): runs with time <=
  // kKernelLatencyBoundsNs[i] and above the previous bound; the last is +Inf.
  std::vector<int64_t> bucket_counts = std::vector<int64_t>(kKernelLatencyBuckets, 0);
};

// Adds k's runs (count, total, max, buckets) to `sum`; the labels of `sum`
// are left as they are.
void AddKernelStats(KernelStats& sum, const KernelStats& k);

using Feeds = std::vector<std::pair<std::string, Value>>;

class InferenceSession {
 public:
  static absl::StatusOr<std::unique_ptr<InferenceSession>> Create(
      const std::string& model_path, const SessionOptions& options);
  static absl::StatusOr<std::unique_ptr<InferenceSession>> CreateFromBytes(
      std::string_view model_bytes, const SessionOptions& options);
  ~InferenceSession();

  // Runs the model. Every graph input without an initializer must be fed once;
  // `output_names` empty means all graph outputs, in graph order. Returns the
  // outputs in the order requested. INVALID_ARGUMENT names a missing, unknown,
  // mistyped or misshaped feed; CANCELLED when RunOptions::terminate was set.
  absl::StatusOr<std::vector<Value>> Run(const RunOptions& options, const Feeds& feeds,
                                         const std::vector<std::string>& output_names) const;

  // IOBinding: like Run, but outputs[i] may hold a tensor of caller memory
  // (Tensor::Wrap) with the output's exact type and shape; the kernel then
  // writes straight into it (no copy when the producing kernel allocates its
  // output). Unbound entries (empty Values) are filled as by Run. Feeds are
  // never copied in either form. INVALID_ARGUMENT names a bound output whose
  // type or shape does not match what the model produced.
  absl::Status RunWithBoundOutputs(const RunOptions& options, const Feeds& feeds,
                                   const std::vector<std::string>& output_names, std::vector<Value>& outputs) const;

  // Per-node latency of the main graph, in execution order.
  std::vector<KernelStats> kernel_stats() const;
  // The same, summed per (op type, provider); `node` is empty, max_ns the
  // largest single-node time. Ordered by op type.
  std::vector<KernelStats> op_type_stats() const;
  // Profiling is an observation, not a change of the model: these are const
  // and thread-safe like Run().
  // Profiles the next `runs` runs (on top of enable_profiling); 0 stops a
  // pending count. A non-empty `file_prefix` replaces
  // SessionOptions::profile_file_prefix for the files written from now on.
  void StartProfiling(int64_t runs, const std::string& file_prefix = "") const;
  // Runs fully recorded since the last EndProfiling() (each has one "run" event).
  int64_t profiled_runs() const;
  // Writes the events recorded so far as a Chrome trace and returns its path.
  absl::StatusOr<std::string> EndProfiling() const;

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const PartitionReport& partition_report() const;
  MemoryPlanInfo memory_plan_info() const;
  // op_type -> node count of the graph after rewriting.
  const std::map<std::string, int64_t>& op_histogram() const;

  class Impl;

 private:
  static absl::StatusOr<std::unique_ptr<InferenceSession>> CreateImpl(const std::string& model_path,
                                                                      std::string_view model_bytes,
                                                                      const SessionOptions& options);
  explicit InferenceSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onyx
