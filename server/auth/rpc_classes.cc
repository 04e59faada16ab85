#include "server/auth/rpc_classes.h"

#include <array>

namespace onyx::server {
namespace {

struct Entry {
  absl::string_view path;
  RpcClass rpc_class;
};

constexpr std::array kRpcs = {
    Entry{"/grpc.health.v1.Health/Check", RpcClass::kPublic},
    Entry{"/grpc.health.v1.Health/Watch", RpcClass::kPublic},
    Entry{"/inference.GRPCInferenceService/ServerLive", RpcClass::kPublic},
    Entry{"/inference.GRPCInferenceService/ServerReady", RpcClass::kPublic},
    Entry{"/inference.GRPCInferenceService/ModelReady", RpcClass::kMetadata},
    Entry{"/inference.GRPCInferenceService/ServerMetadata", RpcClass::kMetadata},
    Entry{"/inference.GRPCInferenceService/ModelMetadata", RpcClass::kMetadata},
    Entry{"/inference.GRPCInferenceService/ModelConfig", RpcClass::kMetadata},
    Entry{"/inference.GRPCInferenceService/ModelStatistics", RpcClass::kMetadata},
    Entry{"/inference.GRPCInferenceService/RepositoryIndex", RpcClass::kMetadata},
    Entry{"/inference.GRPCInferenceService/ModelInfer", RpcClass::kInference},
    Entry{"/inference.GRPCInferenceService/ModelStreamInfer", RpcClass::kInference},
    Entry{"/inference.GRPCInferenceService/RepositoryModelLoad", RpcClass::kControl},
    Entry{"/inference.GRPCInferenceService/RepositoryModelUnload", RpcClass::kControl},
    Entry{"/inference.GRPCInferenceService/SystemSharedMemoryStatus", RpcClass::kControl},
    Entry{"/inference.GRPCInferenceService/SystemSharedMemoryRegister", RpcClass::kControl},
    Entry{"/inference.GRPCInferenceService/SystemSharedMemoryUnregister", RpcClass::kControl},
    Entry{"/inference.GRPCInferenceService/CudaSharedMemoryStatus", RpcClass::kControl},
    Entry{"/inference.GRPCInferenceService/CudaSharedMemoryRegister", RpcClass::kControl},
    Entry{"/inference.GRPCInferenceService/CudaSharedMemoryUnregister", RpcClass::kControl},
    Entry{"/onyx.admin.v1.Admin/ProfileModel", RpcClass::kControl},
    Entry{"/onyx.admin.v1.Admin/DumpArenas", RpcClass::kControl},
};

const Entry* Find(absl::string_view path) {
  for (const Entry& entry : kRpcs) {
    if (entry.path == path) return &entry;
  }
  return nullptr;
}

}  // namespace

absl::string_view RpcClassName(RpcClass rpc_class) {
  switch (rpc_class) {
    case RpcClass::kPublic: return "public";
    case RpcClass::kMetadata: return "metadata";
    case RpcClass::kInference: return "inference";
    case RpcClass::kControl: return "control";
  }
  return "control";
}

RpcClass ClassifyRpc(absl::string_view path) {
  const Entry* entry = Find(path);
  return entry == nullptr ? RpcClass::kControl : entry->rpc_class;
}

bool IsKnownRpc(absl::string_view path) { return Find(path) != nullptr; }

}  // namespace onyx::server
