// Which token opens which RPC: every method onyxd serves falls in one class.
//
//   if (ClassifyRpc("/inference.GRPCInferenceService/ModelInfer") == RpcClass::kInference) ...
//
//   public     no token ever: grpc.health.v1.Health Check and Watch,
//              ServerLive, ServerReady (Kubernetes and load-balancer probes)
//   metadata   an inference or a control token: ModelReady, ServerMetadata,
//              ModelMetadata, ModelConfig, ModelStatistics, RepositoryIndex
//   inference  an inference token: ModelInfer, ModelStreamInfer
//   control    a control token: RepositoryModelLoad/Unload, the System and
//              CUDA shared-memory RPCs, every onyx.admin.v1.Admin RPC
// A path the table does not name (a method added later, or a client's
// invention) is control, the strictest class, so no RPC can be left open by
// omission; the descriptor-driven tests fail until a new method is classified.
// Pure functions over a constant table: thread-safe.
#pragma once

#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace onyx::server {

enum class RpcClass { kPublic, kMetadata, kInference, kControl };

// "public", "metadata", "inference", "control".
absl::string_view RpcClassName(RpcClass rpc_class);

// The class of a gRPC method path ("/package.Service/Method").
RpcClass ClassifyRpc(absl::string_view path);

// True when `path` is in the table (not classified by default).
bool IsKnownRpc(absl::string_view path);

}  // namespace onyx::server
