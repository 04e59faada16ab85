// The one place where absl::Status becomes grpc::Status (after TF Serving's
// grpc_status_util). Handlers build absl::Status values and convert at the edge.
// Pure functions: thread-safe.
#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace onyx::server {

// Same code, same message. absl codes without a gRPC counterpart become UNKNOWN.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace onyx::server
