// SessionOptions: how InferenceSession::Create compiles a model (graph
// rewriting level, providers, threads, memory planning, arenas, profiling).
// Plain data; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace onyx {

enum class OptimizationLevel { kDisabled, kBasic, kExtended, kAll };

// Parses "disabled" | "basic" | "extended" | "all".
absl::StatusOr<OptimizationLevel> ParseOptimizationLevel(std::string_view text);
const char* OptimizationLevelName(OptimizationLevel level);

struct SessionOptions {
  // Graph rewriting; kAll by default.
  OptimizationLevel optimization_level = OptimizationLevel::kAll;
  // When set, Create() writes the rewritten graph to this ONNX file.
  std::string optimized_model_path;
  // Execution providers in priority order, each "name" or "name:key=value;key=value"
  // (provider options); "cpu" is always the last, as the fallback.
  std::vector<std::string> providers = {"cpu"};
  // A listed provider that cannot be created on this host (its library is
  // missing, no device): when true, Create() fails naming it and why; when
  // false, the nodes it would have run fall back to CPU, each counted in the
  // partition report with that reason. Invalid provider options fail either way.
  bool require_providers = false;
  // Custom-operator libraries (onyx/custom_op.h) whose ops this session may
  // run, by path; a library that cannot be loaded fails Create() naming it.
  std::vector<std::string> custom_op_libraries;
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

}  // namespace onyx
