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

// "model 'mlp': input 'x': <message>", as the other request errors read.
absl::Status Where(const inference::ModelInferRequest& request, const char* role,
                   const std::string& name, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("model '", request.model_name(), "': ", role, " '",
                                             name, "': ", s.message()));
}

}  // namespace

absl::StatusOr<std::optional<SharedMemoryRef>> ParseSharedMemoryRef(const ParamMap& params) {
  auto it = params.find(kRegion);
  if (it == params.end()) return std::nullopt;
  if (!it->second.has_string_param() || it->second.string_param().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("parameter '", kRegion, "' must be a string"));
  }
  SharedMemoryRef ref;
  ref.region = it->second.string_param();
  ASSIGN_OR_RETURN(ref.byte_size, UnsignedParam(params, kByteSize, /*required=*/true));
  ASSIGN_OR_RETURN(ref.offset, UnsignedParam(params, kOffset, /*required=*/false));
  return ref;
}

absl::StatusOr<std::string> ReadSharedMemory(const SharedMemoryRef& ref,
                                             const SharedMemoryRegistry& registry) {
  ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> region, registry.Get(ref.region));
  // The range is checked before the buffer is sized from it.
  RETURN_IF_ERROR(region->Slice(ref.offset, ref.byte_size).status());
  std::string bytes(ref.byte_size, '\0');
  RETURN_IF_ERROR(region->ReadInto(ref.offset, ref.byte_size, bytes.data()));
  return bytes;
}

absl::StatusOr<SharedMemoryOutputs> ResolveSharedMemoryOutputs(
    const inference::ModelInferRequest& request, const SharedMemoryRegistry& registry) {
  SharedMemoryOutputs outputs;
  for (const auto& wanted : request.outputs()) {
    absl::StatusOr<std::optional<SharedMemoryRef>> ref = ParseSharedMemoryRef(wanted.parameters());
    if (!ref.ok()) return Where(request, "output", wanted.name(), ref.status());
    if (!ref->has_value()) continue;
    const SharedMemoryRef& target = **ref;
    auto region = registry.Get(target.region);
    if (!region.ok()) return Where(request, "output", wanted.name(), region.status());
    // The whole declared range must lie in the region, whatever the output's size.
    auto range = (*region)->Slice(target.offset, target.byte_size);
    if (!range.ok()) return Where(request, "output", wanted.name(), range.status());
    outputs.targets[wanted.name()] = {*std::move(region), target.offset, target.byte_size};
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
