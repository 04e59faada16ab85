#include "server/grpc/infer_response.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/status_macros.h"
#include "server/grpc/codec.h"

namespace onyx::server {
absl::Status FillInferResponse(const inference::ModelInferRequest& request,
                               const std::string& model_name, const std::string& model_version,
                               const std::vector<std::string>& output_names,
                               const InferenceResult& result,
                               inference::ModelInferResponse* response) {
  if (result.outputs.size() != output_names.size()) {
    return absl::InternalError(absl::StrCat("model '", model_name, "' produced ",
                                            result.outputs.size(), " outputs, expected ",
                                            output_names.size()));
  }
  response->set_model_name(model_name);
  response->set_model_version(model_version);
  response->set_id(request.id());
  response->mutable_outputs()->Reserve(static_cast<int>(output_names.size()));
  response->mutable_raw_output_contents()->Reserve(static_cast<int>(output_names.size()));
  for (size_t i = 0; i < output_names.size(); ++i) {
    const onyx::Tensor& tensor = result.outputs[i];
    auto* output = response->add_outputs();
    output->set_name(output_names[i]);
    const absl::string_view wire = DataTypeToWire(tensor.type());
    output->set_datatype(wire.data(), wire.size());
    output->mutable_shape()->Reserve(static_cast<int>(tensor.dims().size()));
    for (int64_t d : tensor.dims()) output->add_shape(d);
    absl::Status s = EncodeRawTensor(tensor, response->add_raw_output_contents());
    if (!s.ok()) {
      return absl::InternalError(
          absl::StrCat("model '", model_name, "' output '", output_names[i], "': ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckReplySize(const inference::ModelInferResponse& response,
                            int64_t max_message_bytes) {
  if (max_message_bytes <= 0) return absl::OkStatus();
  const size_t bytes = response.ByteSizeLong();
  if (bytes <= static_cast<size_t>(max_message_bytes)) return absl::OkStatus();
  std::string largest;
  size_t largest_bytes = 0;
  for (int i = 0; i < response.raw_output_contents_size() && i < response.outputs_size(); ++i) {
    if (response.raw_output_contents(i).size() >= largest_bytes) {
      largest_bytes = response.raw_output_contents(i).size();
      largest = response.outputs(i).name();
    }
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "model '", response.model_name(), "' version ", response.model_version(), ": the reply is ",
      bytes, " bytes, more than max_message_bytes=", max_message_bytes, "; largest output '",
      largest, "' is ", largest_bytes,
      " bytes (request fewer rows or outputs, or have outputs written to shared memory)"));
}

}  // namespace onyx::server
