#include "server/grpc/model_messages.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/grpc/codec.h"

namespace onyx::server {

void FillModelMetadata(const Model& model, const std::vector<int64_t>& versions,
                       inference::ModelMetadataResponse* response) {
  response->set_name(model.name());
  for (int64_t version : versions) response->add_versions(absl::StrCat(version));
  response->set_platform(kPlatform);
  auto fill = [](const TensorSpec& spec, inference::ModelMetadataResponse::TensorMetadata* t) {
    t->set_name(spec.name);
    t->set_datatype(std::string(DataTypeToWire(spec.type)));
    for (int64_t d : spec.dims) t->add_shape(d);
  };
  for (const TensorSpec& spec : model.inputs()) fill(spec, response->add_inputs());
  for (const TensorSpec& spec : model.outputs()) fill(spec, response->add_outputs());
}

void FillModelConfig(const Model& model, inference::ModelConfig* config) {
  const ModelConfig& mc = model.config();
  config->set_name(model.name());
  config->set_platform(kPlatform);
  config->set_backend("onyx");
  auto* policy = config->mutable_version_policy();
  switch (mc.version_policy.kind) {
    case VersionPolicy::Kind::kLatest:
      policy->mutable_latest()->set_num_versions(static_cast<uint32_t>(mc.version_policy.latest));
      break;
    case VersionPolicy::Kind::kAll:
      policy->mutable_all();
      break;
    case VersionPolicy::Kind::kSpecific:
      for (int64_t v : mc.version_policy.specific) policy->mutable_specific()->add_versions(v);
      break;
  }
  config->set_max_batch_size(static_cast<int32_t>(mc.max_batch_size));
  // Triton lists dims without the batch dimension when the model batches.
  const size_t skip = model.batched() ? 1 : 0;
  for (const TensorSpec& spec : model.inputs()) {
    auto* input = config->add_input();
    input->set_name(spec.name);
    input->set_data_type(DataTypeToConfig(spec.type));
    for (size_t i = skip; i < spec.dims.size(); ++i) input->add_dims(spec.dims[i]);
  }
  for (const TensorSpec& spec : model.outputs()) {
    auto* output = config->add_output();
    output->set_name(spec.name);
    output->set_data_type(DataTypeToConfig(spec.type));
    for (size_t i = skip; i < spec.dims.size(); ++i) output->add_dims(spec.dims[i]);
  }
  auto* group = config->add_instance_group();
  group->set_name(model.name());
  group->set_count(static_cast<int32_t>(mc.instance_count));
  group->set_kind(inference::ModelInstanceGroup::KIND_CPU);
  if (model.batched()) {
    auto* batching = config->mutable_dynamic_batching();
    for (int64_t b : mc.buckets) batching->add_preferred_batch_size(static_cast<int32_t>(b));
    batching->set_max_queue_delay_microseconds(
        static_cast<uint64_t>(mc.dynamic_batching.max_queue_delay_us));
  }
}

namespace {

void SetDuration(const StatDuration& from, inference::StatisticDuration* to) {
  to->set_count(from.count);
  to->set_ns(from.ns);
}

}  // namespace

void FillModelStatistics(const Model& model, inference::ModelStatistics* stats) {
  const ModelStatsSnapshot s = model.stats().Snapshot();
  stats->set_name(model.name());
  stats->set_version(model.version_string());
  stats->set_last_inference(s.last_inference_ms);
  stats->set_inference_count(s.inference_count);
  stats->set_execution_count(s.execution_count);
  auto* infer = stats->mutable_inference_stats();
  SetDuration(s.success, infer->mutable_success());
  SetDuration(s.fail, infer->mutable_fail());
  SetDuration(s.queue, infer->mutable_queue());
  SetDuration(s.compute_input, infer->mutable_compute_input());
  SetDuration(s.compute_infer, infer->mutable_compute_infer());
  SetDuration(s.compute_output, infer->mutable_compute_output());
  for (const auto& [batch_size, batch] : s.batches) {
    auto* out = stats->add_batch_stats();
    out->set_batch_size(batch_size);
    SetDuration(batch.compute_input, out->mutable_compute_input());
    SetDuration(batch.compute_infer, out->mutable_compute_infer());
    SetDuration(batch.compute_output, out->mutable_compute_output());
  }
}

void FillRepositoryIndex(const std::vector<ModelStatus>& index, bool ready_only,
                         inference::RepositoryIndexResponse* response) {
  for (const ModelStatus& status : index) {
    if (ready_only && status.state != ModelState::kReady) continue;
    auto* entry = response->add_models();
    entry->set_name(status.name);
    entry->set_version(status.version);
    entry->set_state(std::string(ModelStateName(status.state)));
    entry->set_reason(status.reason);
  }
}

absl::StatusOr<LoadOverrides> ParseLoadParameters(
    const google::protobuf::Map<std::string, inference::ModelRepositoryParameter>& parameters) {
  LoadOverrides overrides;
  std::vector<std::string> unknown;
  for (const auto& [name, value] : parameters) {
    if (name == "config") {
      if (value.parameter_choice_case() != inference::ModelRepositoryParameter::kStringParam) {
        return absl::InvalidArgumentError(
            "RepositoryModelLoad parameter 'config': expected string_param holding the model "
            "configuration (YAML or JSON)");
      }
      overrides.config = value.string_param();
    } else if (absl::StartsWith(name, "file:")) {
      if (value.parameter_choice_case() != inference::ModelRepositoryParameter::kBytesParam) {
        return absl::InvalidArgumentError(absl::StrCat("RepositoryModelLoad parameter '", name,
                                                       "': expected bytes_param holding the file"));
      }
      overrides.files[name.substr(5)] = value.bytes_param();
    } else {
      unknown.push_back(name);
    }
  }
  if (!unknown.empty()) {
    std::sort(unknown.begin(), unknown.end());
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown RepositoryModelLoad parameter(s) '", absl::StrJoin(unknown, "', '"),
        "': expected 'config' or 'file:<version>/model.onnx'"));
  }
  return overrides;
}

}  // namespace onyx::server
