// The one place where absl::Status becomes grpc::Status (after TF Serving's
// grpc_status_util). Handlers build absl::Status values and convert at the edge.
// Pure functions: thread-safe.
#pragma once

#include <exception>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace onyx::server {

// Same code, same message. absl codes without a gRPC counterpart become UNKNOWN.
grpc::Status ToGrpcStatus(const absl::Status& status);

// f() (returning absl::Status) with a C++ exception turned into a status
// naming `what`: RESOURCE_EXHAUSTED for std::bad_alloc (a buffer sized by a
// client), INTERNAL for anything else. Handlers run their work through it so
// that no exception unwinds into gRPC with a call left open.
template <typename F>
absl::Status StatusFromExceptions(absl::string_view what, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what, " failed: ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(what, " failed with an exception of unknown type"));
  }
}

}  // namespace onyx::server
