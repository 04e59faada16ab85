// ModelInferRequest → InferenceRequest (validated against the model) and
// InferenceResult → ModelInferResponse.
//
//   ASSIGN_OR_RETURN(auto request, ParseInferRequest(wire_request, *model));
//   ... scheduler runs it ...
//   RETURN_IF_ERROR(FillInferResponse(wire_request, "mlp", "3", output_names, result, &reply));
//
// Validation errors are INVALID_ARGUMENT naming the model and the input or
// output, with expected vs received: unknown datatype or one the model does not
// take, wrong rank or a fixed dimension that differs, batch sizes that disagree or
// exceed max_batch_size, byte sizes that do not match, missing, duplicate or
// unknown inputs, raw and typed contents mixed, unknown or duplicate outputs, a
// `timeout` parameter that is not a non-negative integer (µs; it becomes
// InferenceRequest::timeout).
// Pure functions: thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpc_service.pb.h"
#include "server/models/model.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

absl::StatusOr<std::unique_ptr<InferenceRequest>> ParseInferRequest(
    const inference::ModelInferRequest& request, const Model& model);

// Writes the model name and served version, the request id, one output tensor
// per `output_names` entry and its raw_output_contents into `response`. Takes no
// Model so that a reply never extends a model's lifetime.
absl::Status FillInferResponse(const inference::ModelInferRequest& request,
                               const std::string& model_name, const std::string& model_version,
                               const std::vector<std::string>& output_names,
                               const InferenceResult& result,
                               inference::ModelInferResponse* response);

}  // namespace onyx::server
