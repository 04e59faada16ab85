// Builders for the descriptive RPC replies: ModelMetadata, ModelConfig,
// ModelStatistics and RepositoryIndex. They only read; the service decides which model to describe.
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "grpc_service.pb.h"
#include "model_config.pb.h"
#include "server/models/model.h"
#include "server/models/model_repository.h"

namespace onyx::server {

// Platform string reported for every model.
inline constexpr char kPlatform[] = "onnx";

// name, `versions` (every READY version of the model), platform "onnx", inputs
// and outputs of `model` with -1 for the batch dimension and free dimensions.
void FillModelMetadata(const Model& model, const std::vector<int64_t>& versions,
                       inference::ModelMetadataResponse* response);

// Triton-style configuration: dims exclude the batch dimension when
// max_batch_size > 0; buckets become preferred batch sizes.
void FillModelConfig(const Model& model, inference::ModelConfig* config);

// name, served version and the model's counters (ModelStats).
void FillModelStatistics(const Model& model, inference::ModelStatistics* stats);

// One ModelIndex per status (one per version; ModelRepository::Index); only
// READY ones when `ready_only`.
void FillRepositoryIndex(const std::vector<ModelStatus>& index, bool ready_only,
                         inference::RepositoryIndexResponse* response);

// RepositoryModelLoad's parameters (Triton's model repository extension):
// "config" (string_param: model configuration as YAML or JSON) and
// "file:<version>/model.onnx" (bytes_param: the model file). INVALID_ARGUMENT
// naming unknown parameter names, or a parameter of the wrong type.
absl::StatusOr<LoadOverrides> ParseLoadParameters(
    const google::protobuf::Map<std::string, inference::ModelRepositoryParameter>& parameters);

}  // namespace onyx::server
