// Builders for the descriptive RPC replies: ModelMetadata, ModelConfig,
// ModelStatistics and RepositoryIndex. They only read; the service decides which model to describe.
// Pure functions: thread-safe.
#pragma once

#include <vector>

#include "grpc_service.pb.h"
#include "model_config.pb.h"
#include "server/models/model.h"
#include "server/models/model_repository.h"

namespace onyx::server {

// Platform string reported for every model.
inline constexpr char kPlatform[] = "onnx";

// name, versions [served], platform "onnx", inputs and outputs with -1 for the
// batch dimension and free dimensions.
void FillModelMetadata(const Model& model, inference::ModelMetadataResponse* response);

// Triton-style configuration: dims exclude the batch dimension when
// max_batch_size > 0; buckets become preferred batch sizes.
void FillModelConfig(const Model& model, inference::ModelConfig* config);

// name, served version and the model's counters (ModelStats).
void FillModelStatistics(const Model& model, inference::ModelStatistics* stats);

// One ModelIndex per status; only READY ones when `ready_only`.
void FillRepositoryIndex(const std::vector<ModelStatus>& index, bool ready_only,
                         inference::RepositoryIndexResponse* response);

}  // namespace onyx::server
