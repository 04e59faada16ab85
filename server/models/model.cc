#include "server/models/model.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "onyx/status_macros.h"
#include "server/config/yaml_util.h"
#include "server/models/bucket_sessions.h"
#include "server/scheduling/dynamic_batcher.h"

namespace onyx::server {
namespace {

bool IsServableType(onyx::DataType type) {
  return type != onyx::DataType::kUndefined && type != onyx::DataType::kComplex64 &&
         type != onyx::DataType::kComplex128;
}

absl::string_view TypeName(onyx::DataType type) {
  std::string_view name = onyx::DataTypeName(type);
  return absl::string_view(name.data(), name.size());
}

// Why the model cannot take a batch dimension; empty when every input can.
std::string BatchDimProblem(const std::vector<onyx::ValueInfo>& inputs) {
  if (inputs.empty()) return "the model has no inputs";
  for (const onyx::ValueInfo& input : inputs) {
    if (input.dims.empty()) return absl::StrCat("input '", input.name, "' is a scalar");
    if (input.dims[0] >= 0) {
      return absl::StrCat("input '", input.name, "' has fixed first dimension ", input.dims[0]);
    }
  }
  return "";
}

absl::StatusOr<TensorSpec> ToSpec(const onyx::ValueInfo& info, bool batched, bool is_input) {
  const char* role = is_input ? "input" : "output";
  if (info.kind != onyx::ValueInfo::Kind::kTensor) {
    return absl::InvalidArgumentError(
        absl::StrCat(role, " '", info.name, "' is not a tensor; onyx serves tensors only"));
  }
  if (!IsServableType(info.type)) {
    return absl::InvalidArgumentError(absl::StrCat(role, " '", info.name, "' has type ",
                                                   TypeName(info.type),
                                                   ", which the KServe protocol cannot carry"));
  }
  if (is_input && !info.has_shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", info.name, "' has an unknown rank; onyx needs a static rank"));
  }
  TensorSpec spec;
  spec.name = info.name;
  spec.type = info.type;
  spec.has_shape = info.has_shape;
  spec.dims = info.dims;
  if (batched && !spec.dims.empty()) spec.dims[0] = -1;
  return spec;
}

// Adds the dim_params of `info` not yet in `out` (for messages).
void CollectDimParams(const onyx::ValueInfo& info, std::vector<std::string>& out) {
  for (const std::string& param : info.dim_params) {
    if (!param.empty() && std::find(out.begin(), out.end(), param) == out.end()) {
      out.push_back(param);
    }
  }
}

std::string Quoted(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  return absl::StrCat("'", absl::StrJoin(names, "', '"), "'");
}

// config.padded_dims resolved against the graph: which input axes to pad and
// which output axes to slice back.
absl::StatusOr<std::vector<PaddedDim>> ResolvePaddedDims(
    const ModelConfig& config, const std::vector<onyx::ValueInfo>& inputs,
    const std::vector<onyx::ValueInfo>& outputs, absl::string_view source) {
  std::vector<PaddedDim> dims;
  std::vector<std::string> known;
  for (const onyx::ValueInfo& input : inputs) CollectDimParams(input, known);
  for (const auto& [name, padded] : config.padded_dims) {
    const std::string key = absl::StrCat("padded_dims.", name);
    PaddedDim dim;
    dim.name = name;
    dim.sizes = padded.sizes;
    std::vector<std::string> with_dim;
    for (const onyx::ValueInfo& input : inputs) {
      for (size_t axis = 0; axis < input.dim_params.size(); ++axis) {
        if (input.dim_params[axis] != name) continue;
        if (axis == 0 && config.max_batch_size > 0) {
          return yaml_util::BadValue(
              source, key, "a dimension other than the batch dimension",
              absl::StrCat("'", name, "', axis 0 of input '", input.name, "'"));
        }
        auto pad = padded.pad_values.find(input.name);
        dim.inputs.push_back(
            PaddedDim::Use{input.name, axis, pad == padded.pad_values.end() ? 0.0 : pad->second});
        with_dim.push_back(input.name);
      }
    }
    if (dim.inputs.empty()) {
      return yaml_util::BadValue(
          source, "padded_dims",
          absl::StrCat("a dim_param of the model's inputs (", Quoted(known), ")"),
          absl::StrCat("'", name, "'"));
    }
    for (const auto& [input, value] : padded.pad_values) {
      if (std::find(with_dim.begin(), with_dim.end(), input) == with_dim.end()) {
        return yaml_util::BadValue(
            source, absl::StrCat(key, ".pad_values.", input),
            absl::StrCat("an input with dimension '", name, "' (", Quoted(with_dim), ")"),
            absl::StrCat("'", input, "'"));
      }
    }
    for (const onyx::ValueInfo& output : outputs) {
      for (size_t axis = 0; axis < output.dim_params.size(); ++axis) {
        if (output.dim_params[axis] == name) {
          dim.outputs.push_back(PaddedDim::Use{output.name, axis, 0});
        }
      }
    }
    dims.push_back(std::move(dim));
  }
  return dims;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> Model::Load(const Options& options) {
  const absl::Time start = absl::Now();
  std::unique_ptr<Model> model(new Model());
  absl::Status status = model->Init(options);
  if (!status.ok()) {
    // Engine errors already start with "model '<name>': "; say it once.
    const std::string own_prefix = absl::StrCat("model '", options.name, "': ");
    absl::string_view message = status.message();
    absl::ConsumePrefix(&message, own_prefix);
    return absl::Status(status.code(), absl::StrCat("model '", options.name, "' version ",
                                                    options.version, ": ", message));
  }
  model->load_duration_ = absl::Now() - start;
  return model;
}

Model::~Model() {
  if (scheduler_ != nullptr) scheduler_->Stop();
}

absl::Status Model::Init(const Options& options) {
  name_ = options.name;
  version_ = options.version;
  version_string_ = absl::StrCat(options.version);
  const std::string& config_path = options.config_source;
  const std::string& model_path = options.model_path;
  const ModelConfigFile& file = options.config_file;

  // A cheap, unoptimised session tells us the graph's signature before the
  // bucket sessions fix its batch dimension.
  onyx::SessionOptions probe_options = options.session_options;
  probe_options.optimization_level = onyx::OptimizationLevel::kDisabled;
  // Custom-op libraries, relative paths from the model's folder (<repo>/<model>).
  std::vector<std::string> custom_op_libraries;
  if (file.custom_op_libraries) {
    const std::filesystem::path model_folder =
        std::filesystem::path(model_path).parent_path().parent_path();
    for (const std::string& library : *file.custom_op_libraries) {
      std::filesystem::path path(library);
      custom_op_libraries.push_back(path.is_absolute() ? library : (model_folder / path).string());
    }
  }
  probe_options.custom_op_libraries = custom_op_libraries;
  probe_options.model_name = options.name;
  ASSIGN_OR_RETURN(auto probe, onyx::InferenceSession::Create(model_path, probe_options));
  const std::vector<onyx::ValueInfo> graph_inputs = probe->inputs();
  const std::vector<onyx::ValueInfo> graph_outputs = probe->outputs();
  probe.reset();

  ASSIGN_OR_RETURN(config_, ResolveModelConfig(file, BatchDimProblem(graph_inputs), config_path));
  for (const onyx::ValueInfo& info : graph_inputs) {
    ASSIGN_OR_RETURN(TensorSpec spec, ToSpec(info, batched(), /*is_input=*/true));
    inputs_.push_back(std::move(spec));
  }
  for (const onyx::ValueInfo& info : graph_outputs) {
    ASSIGN_OR_RETURN(TensorSpec spec, ToSpec(info, batched(), /*is_input=*/false));
    outputs_.push_back(std::move(spec));
  }

  BucketSessions::Options session_options;
  session_options.model_name = options.name;
  session_options.model_path = model_path;
  session_options.buckets = config_.buckets;
  session_options.inputs = graph_inputs;
  ASSIGN_OR_RETURN(session_options.padded_dims,
                   ResolvePaddedDims(config_, graph_inputs, graph_outputs, config_path));
  session_options.session_options = options.session_options;
  onyx::SessionOptions& engine = session_options.session_options;
  engine.providers = config_.providers;
  engine.require_providers = config_.require_providers;
  engine.custom_op_libraries = custom_op_libraries;
  engine.optimization_level = *onyx::ParseOptimizationLevel(config_.optimization_level);
  engine.max_cpu_fallback_nodes = config_.max_cpu_fallback_nodes;
  engine.intra_op_threads =
      static_cast<int>(EffectiveIntraOpThreads(config_, onyx::ProcessCpuQuota()));
  engine.inter_op_threads = static_cast<int>(config_.inter_op_threads);
  engine.enable_mem_pattern = config_.enable_mem_pattern;
  engine.mem_pattern_cache_size = static_cast<int>(config_.mem_pattern_cache_size);
  // Each version's bucket sessions share an arena of their own, freed when the
  // version unloads; metrics split the group back into model and version.
  engine.arena_group = absl::StrCat(options.name, "/", options.version);
  engine.arena_limit_bytes = config_.arena_limit_bytes;
  BucketSessions::Options::Warmup& warmup = session_options.warmup;
  warmup.runs = config_.warmup.runs;
  if (config_.warmup.inputs == "zeros") {
    warmup.inputs = BucketSessions::Options::Warmup::Inputs::kZeros;
  } else if (config_.warmup.inputs == "random") {
    warmup.inputs = BucketSessions::Options::Warmup::Inputs::kRandom;
  } else {
    // Relative to the model directory, the parent of the version directory.
    warmup.inputs = BucketSessions::Options::Warmup::Inputs::kSamples;
    warmup.sample_dir =
        (std::filesystem::path(model_path).parent_path().parent_path() / config_.warmup.inputs)
            .string();
  }
  ASSIGN_OR_RETURN(sessions_, BucketSessions::Create(session_options));

  inflight_bytes_ = std::make_unique<ByteBudget>(
      absl::StrCat("model '", options.name, "' version ", options.version,
                   ": dynamic_batching.max_inflight_bytes"),
      config_.dynamic_batching.max_inflight_bytes);
  DynamicBatcher::Options scheduler_options;
  scheduler_options.model_name = options.name;
  scheduler_options.model_version = absl::StrCat(options.version);
  scheduler_options.model = sessions_;
  scheduler_options.max_batch_size = config_.max_batch_size;
  scheduler_options.max_queue_delay =
      absl::Microseconds(config_.dynamic_batching.max_queue_delay_us);
  scheduler_options.max_queue_size = config_.dynamic_batching.max_queue_size;
  scheduler_options.instance_count = config_.instance_count;
  scheduler_options.on_batch = options.on_batch;
  scheduler_options.on_execution = [stats = stats_.get()](int64_t rows, absl::Duration run) {
    stats->RecordExecution(rows, static_cast<uint64_t>(absl::ToInt64Nanoseconds(run)));
  };
  scheduler_options.on_timing = options.on_timing;
  ASSIGN_OR_RETURN(scheduler_, DynamicBatcher::Create(std::move(scheduler_options)));
  return absl::OkStatus();
}

}  // namespace onyx::server
