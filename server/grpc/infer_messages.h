// ModelInferRequest → InferenceRequest (validated against the model) and
// InferenceResult → ModelInferResponse.
//
//   ASSIGN_OR_RETURN(auto request, ParseInferRequest(wire_request, *model, limits));
//   ... scheduler runs it ...
//   RETURN_IF_ERROR(FillInferResponse(wire_request, "mlp", "3", output_names, result, &reply));
//
// Validation errors are INVALID_ARGUMENT naming the model and the input or
// output, with expected vs received: unknown datatype or one the model does not
// take, wrong rank or a fixed dimension that differs, batch sizes that disagree or
// exceed max_batch_size, byte sizes that do not match, missing, duplicate or
// unknown inputs, raw and typed contents mixed, unknown or duplicate outputs, a
// `timeout` parameter that is not a non-negative integer (µs; it becomes
// InferenceRequest::timeout). A negative dimension or dims whose product
// overflows int64 are INVALID_ARGUMENT; an input with more elements than
// `limits.max_elements_per_input` is RESOURCE_EXHAUSTED naming the shape, the
// count and the limit. Shapes are checked before any tensor is allocated.
// raw_input_contents of fixed-size types (not BOOL, not BYTES) are not copied:
// the parsed inputs view the bytes of `request` in place (codec.h
// ViewRawTensor), so `request` must stay alive and unchanged while the inputs
// are read, i.e. until the scheduler calls the request's done callback;
// `keep_alive`, when not null, is held by those views.
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpc_service.pb.h"
#include "server/config/server_config.h"
#include "server/models/model.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

struct ParseLimits {
  int64_t max_elements_per_input = kDefaultMaxElementsPerInput;
  // The gRPC message limit: a reply larger than this is RESOURCE_EXHAUSTED
  // naming the model and its largest output (CheckReplySize). 0: no check.
  int64_t max_message_bytes = 0;
};

absl::StatusOr<std::unique_ptr<InferenceRequest>> ParseInferRequest(
    const inference::ModelInferRequest& request, const Model& model, const ParseLimits& limits,
    std::shared_ptr<void> keep_alive = nullptr);

// Writes the model name and served version, the request id, one output tensor
// per `output_names` entry and its raw_output_contents into `response`. Takes no
// Model so that a reply never extends a model's lifetime.
// RESOURCE_EXHAUSTED when `response` would exceed `max_message_bytes` on the
// wire (gRPC would otherwise fail the call with a message naming nothing of
// ours), naming the model, the size, the limit and the largest output.
absl::Status CheckReplySize(const inference::ModelInferResponse& response,
                            int64_t max_message_bytes);

absl::Status FillInferResponse(const inference::ModelInferRequest& request,
                               const std::string& model_name, const std::string& model_version,
                               const std::vector<std::string>& output_names,
                               const InferenceResult& result,
                               inference::ModelInferResponse* response);

}  // namespace onyx::server
