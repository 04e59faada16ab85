// The one door from a ModelInferRequest to the tensors a model runs. onyxd's
// ModelInfer and ModelStreamInfer (infer_call.h) and the request fuzz target
// call DecodeInferRequest; nothing else reads a request's inputs.
//
//   Admission admission;
//   ASSIGN_OR_RETURN(DecodedInferRequest decoded,
//                    DecodeInferRequest(wire, SignatureOf(model), registry, limits,
//                                       [&](int64_t bytes) { return admission.Take(bytes); }));
//   RETURN_IF_ERROR(model.scheduler().Enqueue(std::move(decoded.request), done));
//   ... done: FillInferResponse(wire, ...), WriteSharedMemoryOutputs(wire, decoded.shm_outputs,
//   ...)
//
// Three passes, each reading the message once:
//   decode   — the message's own structure: which raw_input_contents entry,
//              typed contents or shared-memory range feeds each input (raw
//              entries indexed by input position, or over the inputs not in
//              shared memory only), and the shared-memory parameters;
//   resolve  — shared-memory inputs copied out of their regions, output regions
//              looked up and held; then `admit` is called with the request's
//              bytes (its serialized size plus the shared-memory input bytes),
//              before any tensor is decoded;
//   validate — every input against the model's signature and `limits`:
//              datatype, rank and fixed dims, batch sizes that agree and fit
//              max_batch_size, byte sizes, missing, duplicate or unknown
//              inputs, unknown or duplicate outputs, the `timeout` parameter.
// Errors are INVALID_ARGUMENT naming the model and the input or output with
// expected vs received (NOT_FOUND for an unknown region); an input with more
// elements than limits.max_elements_per_input is RESOURCE_EXHAUSTED. The error
// `admit` returns is returned unchanged (it may carry an overload payload).
// Shapes and ranges are checked before anything is allocated from them.
// raw_input_contents of fixed-size types (not BOOL, not BYTES) are not copied:
// the tensors view the bytes of `request` in place, so `request` must stay
// alive and unchanged until the scheduler calls the request's done callback
// (`keep_alive`, when not null, is held by those views); shared-memory inputs
// are owned by the tensors that view them.
// Pure function: thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "grpc_service.pb.h"
#include "server/config/server_config.h"
#include "server/grpc/shared_memory_io.h"
#include "server/memory/shared_memory.h"
#include "server/models/model.h"
#include "server/models/tensor_spec.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

struct ParseLimits {
  int64_t max_elements_per_input = kDefaultMaxElementsPerInput;
  // The gRPC message limit: a reply larger than this is RESOURCE_EXHAUSTED
  // naming the model and its largest output (CheckReplySize). 0: no check.
  int64_t max_message_bytes = 0;
};

// What a request is validated against; views into the model (or a fuzz
// target's fixed signatures), which must outlive the call.
struct ModelSignature {
  absl::string_view name;
  absl::Span<const TensorSpec> inputs;
  absl::Span<const TensorSpec> outputs;
  // 0: inputs are not batched; else dim 0 of every input is the batch, in
  // [1, max_batch_size].
  int64_t max_batch_size = 0;
};

ModelSignature SignatureOf(const Model& model);

struct DecodedInferRequest {
  std::unique_ptr<InferenceRequest> request;
  SharedMemoryOutputs shm_outputs;
  // What `admit` was called with.
  int64_t bytes = 0;
};

absl::StatusOr<DecodedInferRequest> DecodeInferRequest(
    const inference::ModelInferRequest& request, const ModelSignature& model,
    const SharedMemoryRegistry& registry, const ParseLimits& limits,
    absl::FunctionRef<absl::Status(int64_t bytes)> admit,
    std::shared_ptr<void> keep_alive = nullptr);

}  // namespace onyx::server
