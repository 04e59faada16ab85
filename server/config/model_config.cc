#include "server/config/model_config.h"

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
constexpr int64_t kMaxInstances = 64;

absl::StatusOr<ModelConfigFile> ParseUnsafe(absl::string_view text, absl::string_view source) {
  ASSIGN_OR_RETURN(const YAML::Node root, yaml_util::ParseDocument(text, source));
  RETURN_IF_ERROR(yaml_util::CheckKeys(
      root,
      {"max_batch_size", "buckets", "dynamic_batching", "instance_count", "providers", "optimization_level",
       "max_cpu_fallback_nodes", "intra_op_threads"},
      source, ""));
  ModelConfigFile file;
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
  if (root["optimization_level"]) {
    ASSIGN_OR_RETURN(std::string level,
                     yaml_util::GetString(root["optimization_level"], source, "optimization_level"));
    if (!onyx::ParseOptimizationLevel(level).ok()) {
      return yaml_util::BadValue(source, "optimization_level", "one of disabled, basic, extended, all",
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
                     yaml_util::GetInt(root["intra_op_threads"], source, "intra_op_threads", 0, 1024));
  }
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
    RETURN_IF_ERROR(yaml_util::CheckKeys(batching, {"max_queue_delay_us", "max_queue_size"}, source,
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

std::vector<int64_t> DefaultBuckets(int64_t max_batch_size) {
  std::vector<int64_t> buckets;
  for (int64_t b = 1; b < max_batch_size; b *= 2) buckets.push_back(b);
  if (max_batch_size > 0) buckets.push_back(max_batch_size);
  return buckets;
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
  if (file.instance_count) config.instance_count = *file.instance_count;
  if (file.providers) config.providers = *file.providers;
  if (file.optimization_level) config.optimization_level = *file.optimization_level;
  if (file.max_cpu_fallback_nodes) config.max_cpu_fallback_nodes = *file.max_cpu_fallback_nodes;
  if (file.intra_op_threads) config.intra_op_threads = *file.intra_op_threads;
  return config;
}

}  // namespace onyx::server
