#include "server/grpc/infer_messages.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/status_macros.h"
#include "server/grpc/codec.h"

namespace onyx::server {
namespace {

std::string Names(const std::vector<TensorSpec>& specs) {
  return absl::StrJoin(specs, ", ",
                       [](std::string* out, const TensorSpec& s) { out->append(s.name); });
}

const TensorSpec* FindSpec(const std::vector<TensorSpec>& specs, absl::string_view name) {
  for (const TensorSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string ShapeString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// Rank and fixed dims of `shape` against `spec` (-1 in the spec matches any size).
absl::Status CheckShape(const TensorSpec& spec, absl::Span<const int64_t> shape) {
  bool ok = shape.size() == spec.dims.size();
  for (size_t i = 0; ok && i < shape.size(); ++i) {
    ok = shape[i] >= 0 && (spec.dims[i] < 0 || spec.dims[i] == shape[i]);
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("expected shape ", ShapeString(spec.dims),
                                                 " (rank ", spec.dims.size(), "), received ",
                                                 ShapeString(shape), " (rank ", shape.size(), ")"));
}

absl::StatusOr<std::vector<std::string>> RequestedOutputs(
    const inference::ModelInferRequest& request, const Model& model) {
  std::vector<std::string> names;
  if (request.outputs_size() == 0) {
    names.reserve(model.outputs().size());
    for (const TensorSpec& spec : model.outputs()) names.push_back(spec.name);
    return names;
  }
  names.reserve(request.outputs_size());
  for (const auto& output : request.outputs()) {
    if (FindSpec(model.outputs(), output.name()) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown output '", output.name(), "' (expected one of: ", Names(model.outputs()), ")"));
    }
    // A handful of outputs: a linear scan allocates nothing.
    if (std::find(names.begin(), names.end(), output.name()) != names.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("output '", output.name(), "' requested twice"));
    }
    names.push_back(output.name());
  }
  return names;
}

// The `timeout` request parameter (µs, Triton's convention): int64 >= 0 or uint64.
absl::StatusOr<absl::Duration> RequestTimeout(const inference::ModelInferRequest& request) {
  auto it = request.parameters().find("timeout");
  if (it == request.parameters().end()) return absl::InfiniteDuration();
  const inference::InferParameter& p = it->second;
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param &&
      p.int64_param() >= 0) {
    return absl::Microseconds(p.int64_param());
  }
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param) {
    return absl::Microseconds(
        static_cast<int64_t>(std::min<uint64_t>(p.uint64_param(), INT64_MAX)));
  }
  return absl::InvalidArgumentError(
      "parameter 'timeout' must be a non-negative integer number of microseconds");
}

// Negative dims and overflowing products are malformed requests; a well-formed
// shape past the configured limit is refused as too large. Runs before the
// model's shape check so that the message names the real problem.
absl::Status CheckElementCount(absl::Span<const int64_t> shape, const ParseLimits& limits) {
  ASSIGN_OR_RETURN(const int64_t count, CheckedNumElements(shape));
  if (count <= limits.max_elements_per_input) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "shape ", ShapeString(shape), " has ", count, " elements, more than max_elements_per_input (",
      limits.max_elements_per_input, ")"));
}

absl::StatusOr<std::unique_ptr<InferenceRequest>> ParseUnprefixed(
    const inference::ModelInferRequest& request, const Model& model, const ParseLimits& limits,
    const std::shared_ptr<void>& keep_alive) {
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", request.inputs_size(),
                                                   " raw_input_contents (one per input), received ",
                                                   request.raw_input_contents_size()));
  }
  auto parsed = std::make_unique<InferenceRequest>();
  parsed->inputs.reserve(request.inputs_size());
  int64_t batch = -1;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const auto& input = request.inputs(i);
    const TensorSpec* spec = FindSpec(model.inputs(), input.name());
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown input '", input.name(), "' (expected one of: ", Names(model.inputs()), ")"));
    }
    // A handful of inputs: linear scans allocate nothing.
    for (const auto& [name, unused] : parsed->inputs) {
      if (name == input.name()) {
        return absl::InvalidArgumentError(absl::StrCat("input '", input.name(), "' given twice"));
      }
    }
    auto fail = [&input](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat("input '", input.name(), "': ", s.message()));
    };
    absl::StatusOr<onyx::DataType> type = WireToDataType(input.datatype());
    if (!type.ok()) return fail(type.status());
    if (*type != spec->type) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "expected datatype ", DataTypeToWire(spec->type), ", received ", input.datatype())));
    }
    const onyx::Dims shape(input.shape().begin(), input.shape().end());
    if (absl::Status s = CheckElementCount(shape, limits); !s.ok()) return fail(s);
    if (absl::Status s = CheckShape(*spec, shape); !s.ok()) return fail(s);
    if (model.batched()) {
      if (batch >= 0 && shape[0] != batch) {
        return fail(absl::InvalidArgumentError(
            absl::StrCat("batch size ", shape[0], " differs from the other inputs' ", batch)));
      }
      batch = shape[0];
      if (batch < 1 || batch > model.config().max_batch_size) {
        return fail(absl::InvalidArgumentError(
            absl::StrCat("expected a batch size in [1, ", model.config().max_batch_size,
                         "] (max_batch_size), received ", batch)));
      }
    }
    if (raw && HasTypedContents(input.contents())) {
      return fail(absl::InvalidArgumentError(
          "raw_input_contents and typed contents cannot be mixed in one request"));
    }
    absl::StatusOr<onyx::Tensor> tensor =
        raw ? ViewRawTensor(*type, shape, request.raw_input_contents(i), keep_alive)
            : DecodeTypedTensor(*type, shape, input.contents());
    if (!tensor.ok()) return fail(tensor.status());
    parsed->inputs.emplace_back(input.name(), onyx::Value(std::move(*tensor)));
  }
  for (const TensorSpec& spec : model.inputs()) {
    const bool given = std::any_of(parsed->inputs.begin(), parsed->inputs.end(),
                                   [&spec](const auto& in) { return in.first == spec.name; });
    if (!given) {
      return absl::InvalidArgumentError(absl::StrCat("missing input '", spec.name, "' (",
                                                     DataTypeToWire(spec.type), " ",
                                                     ShapeString(spec.dims), ")"));
    }
  }
  parsed->batch_size = model.batched() ? batch : 0;
  ASSIGN_OR_RETURN(parsed->timeout, RequestTimeout(request));
  ASSIGN_OR_RETURN(parsed->output_names, RequestedOutputs(request, model));
  return parsed;
}

}  // namespace

absl::StatusOr<std::unique_ptr<InferenceRequest>> ParseInferRequest(
    const inference::ModelInferRequest& request, const Model& model, const ParseLimits& limits,
    std::shared_ptr<void> keep_alive) {
  auto parsed = ParseUnprefixed(request, model, limits, keep_alive);
  if (!parsed.ok()) {
    return absl::Status(parsed.status().code(),
                        absl::StrCat("model '", model.name(), "': ", parsed.status().message()));
  }
  return parsed;
}

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

absl::Status CheckReplySize(const inference::ModelInferResponse& response, int64_t max_message_bytes) {
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
