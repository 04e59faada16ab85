#include "server/grpc/request_decoder.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/status_macros.h"
#include "server/grpc/codec.h"

namespace onyx::server {
namespace {

std::string Names(absl::Span<const TensorSpec> specs) {
  return absl::StrJoin(specs, ", ",
                       [](std::string* out, const TensorSpec& s) { out->append(s.name); });
}

const TensorSpec* FindSpec(absl::Span<const TensorSpec> specs, absl::string_view name) {
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
    const inference::ModelInferRequest& request, const ModelSignature& model) {
  std::vector<std::string> names;
  if (request.outputs_size() == 0) {
    names.reserve(model.outputs.size());
    for (const TensorSpec& spec : model.outputs) names.push_back(spec.name);
    return names;
  }
  names.reserve(request.outputs_size());
  for (const auto& output : request.outputs()) {
    if (FindSpec(model.outputs, output.name()) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown output '", output.name(), "' (expected one of: ", Names(model.outputs), ")"));
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
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0) {
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
  return absl::ResourceExhaustedError(absl::StrCat("shape ", ShapeString(shape), " has ", count,
                                                   " elements, more than max_elements_per_input (",
                                                   limits.max_elements_per_input, ")"));
}

// Where one input's values are, after decode and resolve.
struct InputSource {
  const inference::ModelInferRequest::InferInputTensor* wire = nullptr;
  std::optional<SharedMemoryRef> shm;
  // Raw bytes: a raw_input_contents entry, or (once resolved) the copy of a
  // shared-memory range held by `owner`. Unset: typed contents.
  std::optional<absl::string_view> raw;
  std::shared_ptr<void> owner;
};

absl::Status ForInput(const InputSource& source, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("input '", source.wire->name(), "': ", s.message()));
}

// Pass 1: which bytes feed which input. Reads only the message.
absl::StatusOr<std::vector<InputSource>> DecodeSources(
    const inference::ModelInferRequest& request) {
  std::vector<InputSource> sources(request.inputs_size());
  int shm_inputs = 0;
  for (int i = 0; i < request.inputs_size(); ++i) {
    sources[i].wire = &request.inputs(i);
    absl::StatusOr<std::optional<SharedMemoryRef>> ref =
        ParseSharedMemoryRef(request.inputs(i).parameters());
    if (!ref.ok()) return ForInput(sources[i], ref.status());
    sources[i].shm = *std::move(ref);
    shm_inputs += sources[i].shm.has_value();
  }
  const int inputs = request.inputs_size();
  const int raw_count = request.raw_input_contents_size();
  const bool by_position = raw_count == inputs;
  if (shm_inputs == 0 && raw_count != 0 && !by_position) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", inputs, " raw_input_contents (one per input), received ", raw_count));
  }
  if (shm_inputs > 0 && raw_count != 0 && !by_position && raw_count != inputs - shm_inputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", inputs - shm_inputs, " raw_input_contents for the ",
                     "inputs not in shared memory, received ", raw_count));
  }
  int next_raw = 0;
  for (int i = 0; i < inputs; ++i) {
    InputSource& source = sources[i];
    const bool typed = HasTypedContents(source.wire->contents());
    if (source.shm.has_value()) {
      if (typed) {
        return ForInput(source, absl::InvalidArgumentError(
                                    "typed contents and shared memory given for one input"));
      }
      continue;
    }
    if (raw_count == 0 && shm_inputs == 0) continue;  // typed contents throughout
    if (typed) {
      return ForInput(source,
                      absl::InvalidArgumentError(
                          shm_inputs > 0 ? "typed contents cannot be mixed with shared memory "
                                           "inputs; send raw"
                                         : "raw_input_contents and typed contents cannot be mixed "
                                           "in one request"));
    }
    const int index = by_position ? i : next_raw++;
    if (index >= raw_count) {
      return ForInput(source, absl::InvalidArgumentError("no raw_input_contents"));
    }
    source.raw = request.raw_input_contents(index);
  }
  return sources;
}

// Pass 2: shared-memory inputs copied out of their regions. Returns their bytes.
absl::StatusOr<int64_t> ResolveSources(const SharedMemoryRegistry& registry,
                                       std::vector<InputSource>* sources) {
  int64_t bytes = 0;
  for (InputSource& source : *sources) {
    if (!source.shm.has_value()) continue;
    absl::StatusOr<std::string> copy = ReadSharedMemory(*source.shm, registry);
    if (!copy.ok()) return ForInput(source, copy.status());
    auto owned = std::make_shared<std::string>(*std::move(copy));
    source.raw = *owned;
    bytes += static_cast<int64_t>(owned->size());
    source.owner = std::move(owned);
  }
  return bytes;
}

// Pass 3: every input against the signature, into tensors.
absl::StatusOr<std::unique_ptr<InferenceRequest>> Validate(
    const inference::ModelInferRequest& request, const std::vector<InputSource>& sources,
    const ModelSignature& model, const ParseLimits& limits,
    const std::shared_ptr<void>& keep_alive) {
  auto parsed = std::make_unique<InferenceRequest>();
  parsed->inputs.reserve(sources.size());
  int64_t batch = -1;
  for (const InputSource& source : sources) {
    const auto& input = *source.wire;
    const TensorSpec* spec = FindSpec(model.inputs, input.name());
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown input '", input.name(), "' (expected one of: ", Names(model.inputs), ")"));
    }
    // A handful of inputs: linear scans allocate nothing.
    for (const auto& [name, unused] : parsed->inputs) {
      if (name == input.name()) {
        return absl::InvalidArgumentError(absl::StrCat("input '", input.name(), "' given twice"));
      }
    }
    auto fail = [&source](const absl::Status& s) { return ForInput(source, s); };
    absl::StatusOr<onyx::DataType> type = WireToDataType(input.datatype());
    if (!type.ok()) return fail(type.status());
    if (*type != spec->type) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "expected datatype ", DataTypeToWire(spec->type), ", received ", input.datatype())));
    }
    const onyx::Dims shape(input.shape().begin(), input.shape().end());
    if (absl::Status s = CheckElementCount(shape, limits); !s.ok()) return fail(s);
    if (absl::Status s = CheckShape(*spec, shape); !s.ok()) return fail(s);
    if (model.max_batch_size > 0) {
      if (batch >= 0 && shape[0] != batch) {
        return fail(absl::InvalidArgumentError(
            absl::StrCat("batch size ", shape[0], " differs from the other inputs' ", batch)));
      }
      batch = shape[0];
      if (batch < 1 || batch > model.max_batch_size) {
        return fail(absl::InvalidArgumentError(
            absl::StrCat("expected a batch size in [1, ", model.max_batch_size,
                         "] (max_batch_size), received ", batch)));
      }
    }
    absl::StatusOr<onyx::Tensor> tensor =
        source.raw.has_value()
            ? ViewRawTensor(*type, shape, *source.raw, source.owner ? source.owner : keep_alive)
            : DecodeTypedTensor(*type, shape, input.contents());
    if (!tensor.ok()) return fail(tensor.status());
    parsed->inputs.emplace_back(input.name(), onyx::Value(std::move(*tensor)));
  }
  for (const TensorSpec& spec : model.inputs) {
    const bool given = std::any_of(parsed->inputs.begin(), parsed->inputs.end(),
                                   [&spec](const auto& in) { return in.first == spec.name; });
    if (!given) {
      return absl::InvalidArgumentError(absl::StrCat("missing input '", spec.name, "' (",
                                                     DataTypeToWire(spec.type), " ",
                                                     ShapeString(spec.dims), ")"));
    }
  }
  parsed->batch_size = model.max_batch_size > 0 ? batch : 0;
  ASSIGN_OR_RETURN(parsed->timeout, RequestTimeout(request));
  ASSIGN_OR_RETURN(parsed->output_names, RequestedOutputs(request, model));
  return parsed;
}

absl::Status ForModel(const ModelSignature& model, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("model '", model.name, "': ", s.message()));
}

}  // namespace

ModelSignature SignatureOf(const Model& model) {
  return {model.name(), model.inputs(), model.outputs(),
          model.batched() ? model.config().max_batch_size : 0};
}

absl::StatusOr<DecodedInferRequest> DecodeInferRequest(
    const inference::ModelInferRequest& request, const ModelSignature& model,
    const SharedMemoryRegistry& registry, const ParseLimits& limits,
    absl::FunctionRef<absl::Status(int64_t bytes)> admit, std::shared_ptr<void> keep_alive) {
  absl::StatusOr<std::vector<InputSource>> sources = DecodeSources(request);
  if (!sources.ok()) return ForModel(model, sources.status());
  absl::StatusOr<int64_t> shm_bytes = ResolveSources(registry, &*sources);
  if (!shm_bytes.ok()) return ForModel(model, shm_bytes.status());
  DecodedInferRequest decoded;
  // Output errors already name the model.
  ASSIGN_OR_RETURN(decoded.shm_outputs, ResolveSharedMemoryOutputs(request, registry));
  decoded.bytes = static_cast<int64_t>(request.ByteSizeLong()) + *shm_bytes;
  RETURN_IF_ERROR(admit(decoded.bytes));
  absl::StatusOr<std::unique_ptr<InferenceRequest>> parsed =
      Validate(request, *sources, model, limits, keep_alive);
  if (!parsed.ok()) return ForModel(model, parsed.status());
  decoded.request = *std::move(parsed);
  return decoded;
}

}  // namespace onyx::server
