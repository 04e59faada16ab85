// InferenceResult → ModelInferResponse (requests come in through
// request_decoder.h).
//
//   RETURN_IF_ERROR(FillInferResponse(wire_request, "mlp", "3", output_names, result, &reply));
//   RETURN_IF_ERROR(CheckReplySize(reply, max_message_bytes));
//
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpc_service.pb.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

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
