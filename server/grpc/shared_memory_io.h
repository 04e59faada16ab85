// Inference tensors that live in registered system shared memory (Triton
// semantics): an input or requested output carrying the parameters
// `shared_memory_region` (string), `shared_memory_byte_size` and optionally
// `shared_memory_offset` (int64 or uint64) is read from / written to that region
// instead of the message.
//
//   ASSIGN_OR_RETURN(std::optional<SharedMemoryRef> ref, ParseSharedMemoryRef(input.parameters()));
//   if (ref) ASSIGN_OR_RETURN(std::string bytes, ReadSharedMemory(*ref, registry));
//   ASSIGN_OR_RETURN(SharedMemoryOutputs outputs, ResolveSharedMemoryOutputs(request, registry));
//   ... run, FillInferResponse(request, ...) ...
//   RETURN_IF_ERROR(WriteSharedMemoryOutputs(request, outputs, &response));
//
// Inputs are read by the request decoder (request_decoder.h). Output regions
// are resolved and held when the request is accepted, so a region unregistered
// while the request runs still receives its outputs (the mapping goes away
// with the last request holding it).
//
// Pure functions over the registry (thread-safe).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpc_service.pb.h"
#include "server/memory/shared_memory.h"

namespace onyx::server {

// Where one tensor's bytes are in shared memory.
struct SharedMemoryRef {
  std::string region;
  uint64_t byte_size = 0;
  uint64_t offset = 0;
};

// nullopt when `params` name no region. INVALID_ARGUMENT naming the parameter
// for a region that is not a non-empty string, a missing byte size, or a size
// or offset that is not a non-negative integer.
absl::StatusOr<std::optional<SharedMemoryRef>> ParseSharedMemoryRef(
    const google::protobuf::Map<std::string, inference::InferParameter>& params);

// A copy of the bytes `ref` names. NOT_FOUND for an unknown region;
// INVALID_ARGUMENT for a range outside it (checked before the copy is sized)
// or a region the client truncated after registering it.
absl::StatusOr<std::string> ReadSharedMemory(const SharedMemoryRef& ref,
                                             const SharedMemoryRegistry& registry);

// The regions of the outputs `request` asks to be placed in shared memory, by
// output name.
struct SharedMemoryOutputs {
  struct Target {
    std::shared_ptr<const SharedMemoryRegion> region;
    uint64_t offset = 0;
    uint64_t byte_size = 0;
  };
  std::map<std::string, Target, std::less<>> targets;
};

// Errors (naming the model and output): INVALID_ARGUMENT for a missing byte
// size or a range outside the region, NOT_FOUND for an unknown region.
absl::StatusOr<SharedMemoryOutputs> ResolveSharedMemoryOutputs(
    const inference::ModelInferRequest& request, const SharedMemoryRegistry& registry);

// For each output in `outputs`: copies its raw_output_contents entry into the
// region, leaves that entry empty (so indexes still match `outputs`) and
// echoes the shared-memory parameters on the output. INVALID_ARGUMENT when the
// output is larger than shared_memory_byte_size.
absl::Status WriteSharedMemoryOutputs(const inference::ModelInferRequest& request,
                                      const SharedMemoryOutputs& outputs,
                                      inference::ModelInferResponse* response);

}  // namespace onyx::server
