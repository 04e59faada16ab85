#include "server/config/model_config.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/session.h"
#include "onyx/status_macros.h"
#include "server/config/yaml_util.h"

namespace onyx::server {
namespace {

constexpr int64_t kMaxBatch = 65536;
constexpr int64_t kMaxQueueDelayUs = 10'000'000;  // 10 s
constexpr int64_t kMaxQueueSize = 1 << 20;
constexpr int64_t kMaxInflightBytes = int64_t{1} << 50;
constexpr int64_t kMaxInstances = 64;
// Versions are positive int64s, as the repository reads directory names.
constexpr int64_t kMaxVersion = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxPaddedSize = 1 << 24;
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxPatterns = 1 << 16;
constexpr int64_t kMaxArenaBytes = int64_t{1} << 50;  // 1 PiB: far above any host
constexpr int64_t kMaxWarmupRuns = 1000;

absl::StatusOr<bool> GetBool(const YAML::Node& node, absl::string_view source,
                             absl::string_view key) {
  if (node.IsScalar()) {
    if (node.Scalar() == "true") return true;
    if (node.Scalar() == "false") return false;
  }
  return yaml_util::BadValue(source, key, "true or false", yaml_util::Describe(node));
}

absl::Status ParseWarmup(const YAML::Node& node, absl::string_view source, ModelConfigFile& file) {
  RETURN_IF_ERROR(yaml_util::ExpectMap(node, source, "warmup"));
  RETURN_IF_ERROR(yaml_util::CheckKeys(node, {"runs", "inputs"}, source, "warmup."));
  if (node["runs"]) {
    ASSIGN_OR_RETURN(file.warmup_runs,
                     yaml_util::GetInt(node["runs"], source, "warmup.runs", 0, kMaxWarmupRuns));
  }
  if (node["inputs"]) {
    ASSIGN_OR_RETURN(std::string inputs, yaml_util::GetString(node["inputs"], source, "warmup.inputs"));
    if (inputs.empty() || inputs.front() == '/') {
      return yaml_util::BadValue(source, "warmup.inputs",
                                 "zeros, random or a directory relative to the model directory",
                                 absl::StrCat("'", inputs, "'"));
    }
    file.warmup_inputs = std::move(inputs);
  }
  return absl::OkStatus();
}

absl::StatusOr<VersionPolicy> ParseVersionPolicy(const YAML::Node& node, absl::string_view source) {
  constexpr char kExpected[] = "'all', {latest: N} or {specific: [versions]}";
  VersionPolicy policy;
  if (node.IsScalar()) {
    if (node.Scalar() != "all") {
      return yaml_util::BadValue(source, "version_policy", kExpected, yaml_util::Describe(node));
    }
    policy.kind = VersionPolicy::Kind::kAll;
    return policy;
  }
  if (!node.IsMap() || node.size() != 1) {
    return yaml_util::BadValue(source, "version_policy", kExpected, yaml_util::Describe(node));
  }
  RETURN_IF_ERROR(yaml_util::CheckKeys(node, {"latest", "specific"}, source, "version_policy."));
  if (node["latest"]) {
    policy.kind = VersionPolicy::Kind::kLatest;
    ASSIGN_OR_RETURN(policy.latest, yaml_util::GetInt(node["latest"], source,
                                                      "version_policy.latest", 1, 1 << 20));
    return policy;
  }
  policy.kind = VersionPolicy::Kind::kSpecific;
  ASSIGN_OR_RETURN(policy.specific,
                   yaml_util::GetIntList(node["specific"], source, "version_policy.specific", 1,
                                         kMaxVersion));
  std::sort(policy.specific.begin(), policy.specific.end());
  if (std::adjacent_find(policy.specific.begin(), policy.specific.end()) != policy.specific.end()) {
    return yaml_util::BadValue(source, "version_policy.specific", "distinct versions",
                               absl::StrCat("[", absl::StrJoin(policy.specific, ", "), "]"));
  }
  return policy;
}

// A finite number (pad values may be fractional, e.g. for float inputs).
absl::StatusOr<double> GetNumber(const YAML::Node& node, absl::string_view source,
                                 absl::string_view key) {
  double value = 0;
  if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &value) || !std::isfinite(value)) {
    return yaml_util::BadValue(source, key, "a finite number", yaml_util::Describe(node));
  }
  return value;
}

absl::StatusOr<std::map<std::string, PaddedDimConfig>> ParsePaddedDims(const YAML::Node& node,
                                                                       absl::string_view source) {
  RETURN_IF_ERROR(yaml_util::ExpectMap(node, source, "padded_dims"));
  std::map<std::string, PaddedDimConfig> dims;
  for (const auto& item : node) {
    const std::string name = item.first.as<std::string>();
    const std::string key = absl::StrCat("padded_dims.", name);
    const YAML::Node dim = item.second;
    RETURN_IF_ERROR(yaml_util::ExpectMap(dim, source, key));
    RETURN_IF_ERROR(yaml_util::CheckKeys(dim, {"sizes", "pad_values"}, source, key + "."));
    PaddedDimConfig config;
    if (!dim["sizes"]) {
      return yaml_util::BadValue(source, key + ".sizes", "a list of ascending sizes", "nothing");
    }
    ASSIGN_OR_RETURN(config.sizes,
                     yaml_util::GetIntList(dim["sizes"], source, key + ".sizes", 1, kMaxPaddedSize));
    for (size_t i = 1; i < config.sizes.size(); ++i) {
      if (config.sizes[i] <= config.sizes[i - 1]) {
        return yaml_util::BadValue(source, key + ".sizes", "strictly ascending sizes",
                                   absl::StrCat("[", absl::StrJoin(config.sizes, ", "), "]"));
      }
    }
    if (dim["pad_values"]) {
      const YAML::Node values = dim["pad_values"];
      RETURN_IF_ERROR(yaml_util::ExpectMap(values, source, key + ".pad_values"));
      for (const auto& pad : values) {
        const std::string input = pad.first.as<std::string>();
        ASSIGN_OR_RETURN(config.pad_values[input],
                         GetNumber(pad.second, source, absl::StrCat(key, ".pad_values.", input)));
      }
    }
    dims.emplace(name, std::move(config));
  }
  return dims;
}

absl::StatusOr<ModelConfigFile> ParseUnsafe(absl::string_view text, absl::string_view source) {
  ASSIGN_OR_RETURN(const YAML::Node root, yaml_util::ParseDocument(text, source));
  RETURN_IF_ERROR(yaml_util::CheckKeys(
      root,
      {"max_batch_size", "buckets", "dynamic_batching", "instance_count", "providers",
       "require_providers", "custom_op_libraries", "optimization_level", "max_cpu_fallback_nodes",
       "intra_op_threads", "inter_op_threads", "enable_mem_pattern", "mem_pattern_cache_size",
       "arena_limit_bytes", "warmup", "version_policy", "padded_dims"},
      source, ""));
  ModelConfigFile file;
  if (root["version_policy"]) {
    ASSIGN_OR_RETURN(file.version_policy, ParseVersionPolicy(root["version_policy"], source));
  }
  if (root["padded_dims"]) {
    ASSIGN_OR_RETURN(file.padded_dims, ParsePaddedDims(root["padded_dims"], source));
  }
  if (root["providers"]) {
    const YAML::Node list = root["providers"];
    if (!list.IsSequence() || list.size() == 0) {
      return yaml_util::BadValue(source, "providers", "a non-empty list of provider names",
                                 yaml_util::Describe(list));
    }
    std::vector<std::string> providers;
    for (size_t i = 0; i < list.size(); ++i) {
      ASSIGN_OR_RETURN(std::string name, yaml_util::GetString(list[i], source, "providers"));
      providers.push_back(std::move(name));
    }
    file.providers = std::move(providers);
  }
  if (root["require_providers"]) {
    ASSIGN_OR_RETURN(file.require_providers, GetBool(root["require_providers"], source, "require_providers"));
  }
  if (root["custom_op_libraries"]) {
    const YAML::Node list = root["custom_op_libraries"];
    if (!list.IsSequence()) {
      return yaml_util::BadValue(source, "custom_op_libraries", "a list of library paths",
                                 yaml_util::Describe(list));
    }
    std::vector<std::string> paths;
    for (size_t i = 0; i < list.size(); ++i) {
      ASSIGN_OR_RETURN(std::string path, yaml_util::GetString(list[i], source, "custom_op_libraries"));
      if (path.empty()) {
        return yaml_util::BadValue(source, "custom_op_libraries", "a non-empty library path", "''");
      }
      paths.push_back(std::move(path));
    }
    file.custom_op_libraries = std::move(paths);
  }
  if (root["optimization_level"]) {
    ASSIGN_OR_RETURN(std::string level,
                     yaml_util::GetString(root["optimization_level"], source, "optimization_level"));
    if (!onyx::ParseOptimizationLevel(level).ok()) {
      return yaml_util::BadValue(source, "optimization_level",
                                 "one of disabled, basic, extended, all",
                                 absl::StrCat("'", level, "'"));
    }
    file.optimization_level = level;
  }
  if (root["max_cpu_fallback_nodes"]) {
    ASSIGN_OR_RETURN(file.max_cpu_fallback_nodes,
                     yaml_util::GetInt(root["max_cpu_fallback_nodes"], source, "max_cpu_fallback_nodes", -1,
                                       1 << 30));
  }
  if (root["intra_op_threads"]) {
    ASSIGN_OR_RETURN(file.intra_op_threads,
                     yaml_util::GetInt(root["intra_op_threads"], source, "intra_op_threads", 0, kMaxThreads));
  }
  if (root["inter_op_threads"]) {
    ASSIGN_OR_RETURN(file.inter_op_threads,
                     yaml_util::GetInt(root["inter_op_threads"], source, "inter_op_threads", 0, kMaxThreads));
  }
  if (root["enable_mem_pattern"]) {
    ASSIGN_OR_RETURN(file.enable_mem_pattern,
                     GetBool(root["enable_mem_pattern"], source, "enable_mem_pattern"));
  }
  if (root["mem_pattern_cache_size"]) {
    ASSIGN_OR_RETURN(file.mem_pattern_cache_size,
                     yaml_util::GetInt(root["mem_pattern_cache_size"], source, "mem_pattern_cache_size", 1,
                                       kMaxPatterns));
  }
  if (root["arena_limit_bytes"]) {
    ASSIGN_OR_RETURN(file.arena_limit_bytes, yaml_util::GetInt(root["arena_limit_bytes"], source,
                                                               "arena_limit_bytes", 0, kMaxArenaBytes));
  }
  if (root["warmup"]) RETURN_IF_ERROR(ParseWarmup(root["warmup"], source, file));
  if (root["max_batch_size"]) {
    ASSIGN_OR_RETURN(file.max_batch_size, yaml_util::GetInt(root["max_batch_size"], source,
                                                            "max_batch_size", 0, kMaxBatch));
  }
  if (root["buckets"]) {
    ASSIGN_OR_RETURN(file.buckets,
                     yaml_util::GetIntList(root["buckets"], source, "buckets", 1, kMaxBatch));
    for (size_t i = 1; i < file.buckets->size(); ++i) {
      if ((*file.buckets)[i] <= (*file.buckets)[i - 1]) {
        return yaml_util::BadValue(source, "buckets", "strictly ascending batch sizes",
                                   absl::StrCat("[", absl::StrJoin(*file.buckets, ", "), "]"));
      }
    }
  }
  if (root["dynamic_batching"]) {
    const YAML::Node batching = root["dynamic_batching"];
    RETURN_IF_ERROR(yaml_util::ExpectMap(batching, source, "dynamic_batching"));
    RETURN_IF_ERROR(yaml_util::CheckKeys(
        batching, {"max_queue_delay_us", "max_queue_size", "max_inflight_bytes"}, source,
        "dynamic_batching."));
    if (batching["max_queue_delay_us"]) {
      ASSIGN_OR_RETURN(
          file.max_queue_delay_us,
          yaml_util::GetInt(batching["max_queue_delay_us"], source,
                            "dynamic_batching.max_queue_delay_us", 0, kMaxQueueDelayUs));
    }
    if (batching["max_queue_size"]) {
      ASSIGN_OR_RETURN(file.max_queue_size,
                       yaml_util::GetInt(batching["max_queue_size"], source,
                                         "dynamic_batching.max_queue_size", 1, kMaxQueueSize));
    }
    if (batching["max_inflight_bytes"]) {
      ASSIGN_OR_RETURN(file.max_inflight_bytes,
                       yaml_util::GetInt(batching["max_inflight_bytes"], source,
                                         "dynamic_batching.max_inflight_bytes", 0,
                                         kMaxInflightBytes));
    }
  }
  if (root["instance_count"]) {
    ASSIGN_OR_RETURN(file.instance_count, yaml_util::GetInt(root["instance_count"], source,
                                                            "instance_count", 1, kMaxInstances));
  }
  return file;
}

}  // namespace

absl::StatusOr<ModelConfigFile> ParseModelConfig(absl::string_view text, absl::string_view source) {
  try {
    return ParseUnsafe(text, source);
  } catch (const std::exception& e) {  // yaml-cpp throws from node accessors
    return absl::InvalidArgumentError(absl::StrCat(source, ": invalid model config: ", e.what()));
  }
}

absl::StatusOr<ModelConfigFile> LoadModelConfigFile(const std::string& path) {
  absl::StatusOr<std::string> text = yaml_util::ReadFile(path);
  if (absl::IsNotFound(text.status())) return ModelConfigFile{};
  if (!text.ok()) return text.status();
  return ParseModelConfig(*text, path);
}

std::vector<int64_t> SelectVersions(const VersionPolicy& policy, std::vector<int64_t> available) {
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  switch (policy.kind) {
    case VersionPolicy::Kind::kAll: return available;
    case VersionPolicy::Kind::kSpecific: return policy.specific;
    case VersionPolicy::Kind::kLatest: break;
  }
  const size_t keep = std::min(available.size(), static_cast<size_t>(policy.latest));
  return std::vector<int64_t>(available.end() - static_cast<std::ptrdiff_t>(keep), available.end());
}

std::vector<int64_t> DefaultBuckets(int64_t max_batch_size) {
  std::vector<int64_t> buckets;
  for (int64_t b = 1; b < max_batch_size; b *= 2) buckets.push_back(b);
  if (max_batch_size > 0) buckets.push_back(max_batch_size);
  return buckets;
}

int64_t DefaultIntraOpThreads(int64_t cpu_quota, int64_t instance_count, int64_t inter_op_threads) {
  const int64_t runs =
      std::max<int64_t>(instance_count, 1) * std::max<int64_t>(inter_op_threads, 1);
  return std::max<int64_t>(cpu_quota / runs, 1);
}

int64_t EffectiveIntraOpThreads(const ModelConfig& config, int64_t cpu_quota) {
  return config.intra_op_threads > 0
             ? config.intra_op_threads
             : DefaultIntraOpThreads(cpu_quota, config.instance_count, config.inter_op_threads);
}

absl::StatusOr<ModelConfig> ResolveModelConfig(const ModelConfigFile& file,
                                               absl::string_view batch_dim_problem,
                                               absl::string_view source) {
  ModelConfig config;
  const bool batchable = batch_dim_problem.empty();
  config.max_batch_size = file.max_batch_size.value_or(batchable ? kDefaultMaxBatchSize : 0);
  if (config.max_batch_size > 0 && !batchable) {
    return yaml_util::BadValue(
        source, "max_batch_size",
        absl::StrCat("0 because the model has no batch dimension (", batch_dim_problem, ")"),
        absl::StrCat("'", config.max_batch_size, "'"));
  }
  if (config.max_batch_size == 0) {
    if (file.buckets) {
      return yaml_util::BadValue(source, "buckets", "no buckets when max_batch_size is 0",
                                 absl::StrCat("[", absl::StrJoin(*file.buckets, ", "), "]"));
    }
  } else {
    config.buckets = file.buckets.value_or(DefaultBuckets(config.max_batch_size));
    if (config.buckets.back() != config.max_batch_size) {
      return yaml_util::BadValue(
          source, "buckets",
          absl::StrCat("ascending sizes ending at max_batch_size ", config.max_batch_size),
          absl::StrCat("[", absl::StrJoin(config.buckets, ", "), "]"));
    }
  }
  if (file.max_queue_delay_us)
    config.dynamic_batching.max_queue_delay_us = *file.max_queue_delay_us;
  if (file.max_queue_size) config.dynamic_batching.max_queue_size = *file.max_queue_size;
  if (file.max_inflight_bytes) {
    config.dynamic_batching.max_inflight_bytes = *file.max_inflight_bytes;
  }
  if (file.instance_count) config.instance_count = *file.instance_count;
  if (file.providers) config.providers = *file.providers;
  if (file.require_providers) config.require_providers = *file.require_providers;
  if (file.custom_op_libraries) config.custom_op_libraries = *file.custom_op_libraries;
  if (file.optimization_level) config.optimization_level = *file.optimization_level;
  if (file.max_cpu_fallback_nodes) config.max_cpu_fallback_nodes = *file.max_cpu_fallback_nodes;
  if (file.intra_op_threads) config.intra_op_threads = *file.intra_op_threads;
  if (file.inter_op_threads) config.inter_op_threads = *file.inter_op_threads;
  if (file.enable_mem_pattern) config.enable_mem_pattern = *file.enable_mem_pattern;
  if (file.mem_pattern_cache_size) config.mem_pattern_cache_size = *file.mem_pattern_cache_size;
  if (file.arena_limit_bytes) config.arena_limit_bytes = *file.arena_limit_bytes;
  if (file.warmup_runs) config.warmup.runs = *file.warmup_runs;
  if (file.warmup_inputs) config.warmup.inputs = *file.warmup_inputs;
  if (file.version_policy) config.version_policy = *file.version_policy;
  if (file.padded_dims) config.padded_dims = *file.padded_dims;
  return config;
}

}  // namespace onyx::server
