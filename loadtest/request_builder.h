// What onyx-load sends to each model: the request variants, serialised once
// before the run, from ModelMetadata plus --batch, --shape, --input-data,
// --encoding and --shm.
//
//   ASSIGN_OR_RETURN(ModelWork work, BuildModelWork(metadata, spec, options, /*index=*/0));
//   // work.variants[i].bytes is a complete ModelInferRequest on the wire
//
// Errors are INVALID_ARGUMENT (or NOT_FOUND for a file) naming the model,
// the tensor and the flag that would fix it. Thread-compatible; the result
// is immutable during the run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpc_service.pb.h"
#include "loadtest/data_files.h"
#include "loadtest/options.h"
#include "loadtest/shm_region.h"

namespace onyx::load {

struct OutputSpec {
  std::string name, datatype;
  std::vector<int64_t> shape;  // -1 where the size is not known in advance
  int64_t bytes = -1;          // -1 when not known in advance
};

struct RequestVariant {
  std::string bytes;   // the serialised request (without an id)
  TensorSet expected;  // outputs to compare with under --validate
};

struct ModelWork {
  ModelSpec spec;
  std::string method;              // "/inference.GRPCInferenceService/ModelInfer", ...
  std::vector<TensorSpec> inputs;  // as sent by the first variant
  std::vector<OutputSpec> outputs;
  std::vector<RequestVariant> variants;
  std::string data_source;         // "random", "zeros", a path
  std::unique_ptr<ShmRegion> shm;  // --shm system: every variant's inputs (and outputs)
  std::string shm_name;            // the name it is registered under
};

// index: the model's position among --model flags (seeds and region names).
absl::StatusOr<ModelWork> BuildModelWork(const inference::ModelMetadataResponse& metadata, const ModelSpec& spec,
                                         const Options& options, int index);

// The empty call: ServerLive with an empty request.
ModelWork EmptyCallWork();

}  // namespace onyx::load
