#include "server/grpc/shared_memory_io.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "server/grpc/codec.h"

namespace onyx::server {
namespace {

using ParamMap = google::protobuf::Map<std::string, inference::InferParameter>;

constexpr char kRegion[] = "shared_memory_region";
constexpr char kByteSize[] = "shared_memory_byte_size";
constexpr char kOffset[] = "shared_memory_offset";

struct ShmRef {
  std::string region;
  uint64_t byte_size = 0;
  uint64_t offset = 0;
};

absl::StatusOr<uint64_t> UnsignedParam(const ParamMap& params, const char* key, bool required) {
  auto it = params.find(key);
  if (it == params.end()) {
    if (required) return absl::InvalidArgumentError(absl::StrCat("parameter '", key, "' missing"));
    return 0;
  }
  if (it->second.has_uint64_param()) return it->second.uint64_param();
  if (it->second.has_int64_param() && it->second.int64_param() >= 0) {
    return static_cast<uint64_t>(it->second.int64_param());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("parameter '", key, "' must be a non-negative integer"));
}

// nullopt-like: region empty when the tensor does not use shared memory.
absl::StatusOr<ShmRef> ParseRef(const ParamMap& params) {
  ShmRef ref;
  auto it = params.find(kRegion);
  if (it == params.end()) return ref;
  if (!it->second.has_string_param() || it->second.string_param().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("parameter '", kRegion, "' must be a string"));
  }
  ref.region = it->second.string_param();
  ASSIGN_OR_RETURN(ref.byte_size, UnsignedParam(params, kByteSize, /*required=*/true));
  ASSIGN_OR_RETURN(ref.offset, UnsignedParam(params, kOffset, /*required=*/false));
  return ref;
}

// "model 'mlp': input 'x': <message>", as the other request errors read.
absl::Status Where(const inference::ModelInferRequest& request, const char* role,
                   const std::string& name, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("model '", request.model_name(), "': ", role, " '",
                                             name, "': ", s.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<inference::ModelInferRequest>> InlineSharedMemoryInputs(
    const inference::ModelInferRequest& request, const SharedMemoryRegistry& registry) {
  int shm_inputs = 0;
  for (const auto& input : request.inputs()) shm_inputs += input.parameters().contains(kRegion);
  if (shm_inputs == 0) return nullptr;
  const int raw_count = request.raw_input_contents_size();
  const bool by_position = raw_count == request.inputs_size();
  if (raw_count != 0 && !by_position && raw_count != request.inputs_size() - shm_inputs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", request.inputs_size() - shm_inputs, " raw_input_contents for the ",
        "inputs not in shared memory, received ", raw_count));
  }
  auto out = std::make_unique<inference::ModelInferRequest>(request);
  out->clear_raw_input_contents();
  int next_raw = 0;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const auto& input = request.inputs(i);
    absl::StatusOr<ShmRef> ref = ParseRef(input.parameters());
    if (!ref.ok()) return Where(request, "input", input.name(), ref.status());
    std::string* raw = out->add_raw_input_contents();
    if (ref->region.empty()) {
      if (HasTypedContents(input.contents())) {
        return Where(request, "input", input.name(),
                     absl::InvalidArgumentError(
                         "typed contents cannot be mixed with shared memory inputs; send raw"));
      }
      const int index = by_position ? i : next_raw++;
      if (index >= raw_count) {
        return Where(request, "input", input.name(),
                     absl::InvalidArgumentError("no raw_input_contents"));
      }
      *raw = request.raw_input_contents(index);
      continue;
    }
    auto region = registry.Get(ref->region);
    if (!region.ok()) return Where(request, "input", input.name(), region.status());
    // The range is checked before the buffer is sized from it.
    auto range = (*region)->Slice(ref->offset, ref->byte_size);
    if (!range.ok()) return Where(request, "input", input.name(), range.status());
    raw->resize(ref->byte_size);
    absl::Status read = (*region)->ReadInto(ref->offset, ref->byte_size, raw->data());
    if (!read.ok()) return Where(request, "input", input.name(), read);
    auto* params = out->mutable_inputs(i)->mutable_parameters();
    params->erase(kRegion);
    params->erase(kByteSize);
    params->erase(kOffset);
  }
  return out;
}

absl::StatusOr<SharedMemoryOutputs> ResolveSharedMemoryOutputs(
    const inference::ModelInferRequest& request, const SharedMemoryRegistry& registry) {
  SharedMemoryOutputs outputs;
  for (const auto& wanted : request.outputs()) {
    absl::StatusOr<ShmRef> ref = ParseRef(wanted.parameters());
    if (!ref.ok()) return Where(request, "output", wanted.name(), ref.status());
    if (ref->region.empty()) continue;
    auto region = registry.Get(ref->region);
    if (!region.ok()) return Where(request, "output", wanted.name(), region.status());
    // The whole declared range must lie in the region, whatever the output's size.
    auto range = (*region)->Slice(ref->offset, ref->byte_size);
    if (!range.ok()) return Where(request, "output", wanted.name(), range.status());
    outputs.targets[wanted.name()] = {*std::move(region), ref->offset, ref->byte_size};
  }
  return outputs;
}

absl::Status WriteSharedMemoryOutputs(const inference::ModelInferRequest& request,
                                      const SharedMemoryOutputs& outputs,
                                      inference::ModelInferResponse* response) {
  if (outputs.targets.empty()) return absl::OkStatus();
  for (int i = 0; i < response->outputs_size(); ++i) {
    const std::string& name = response->outputs(i).name();
    auto target = outputs.targets.find(name);
    if (target == outputs.targets.end()) continue;
    if (i >= response->raw_output_contents_size()) {
      return absl::InternalError(absl::StrCat("output '", name, "' has no data"));
    }
    std::string* raw = response->mutable_raw_output_contents(i);
    if (raw->size() > target->second.byte_size) {
      return Where(request, "output", name,
                   absl::InvalidArgumentError(absl::StrCat("needs ", raw->size(),
                                                           " bytes, shared_memory_byte_size is ",
                                                           target->second.byte_size)));
    }
    absl::Status written =
        target->second.region->WriteFrom(target->second.offset, raw->data(), raw->size());
    if (!written.ok()) return Where(request, "output", name, written);
    raw->clear();
    auto* params = response->mutable_outputs(i)->mutable_parameters();
    for (const auto& wanted : request.outputs()) {
      if (wanted.name() != name) continue;
      for (const char* key : {kRegion, kByteSize, kOffset}) {
        auto it = wanted.parameters().find(key);
        if (it != wanted.parameters().end()) (*params)[key] = it->second;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace onyx::server
