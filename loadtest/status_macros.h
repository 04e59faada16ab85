// Error propagation for absl::Status / absl::StatusOr inside onyx-load (which
// links proto/ only, so it keeps its own copy of the engine's two macros).
//
//   RETURN_IF_ERROR(DoThing());
//   ASSIGN_OR_RETURN(auto value, ComputeValue());
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ONYX_LOAD_CONCAT_INNER(a, b) a##b
#define ONYX_LOAD_CONCAT(a, b) ONYX_LOAD_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                              \
  do {                                                     \
    ::absl::Status onyx_load_status_ = (expr);             \
    if (!onyx_load_status_.ok()) return onyx_load_status_; \
  } while (0)

#define ONYX_LOAD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return std::move(tmp).status();        \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ONYX_LOAD_ASSIGN_OR_RETURN_IMPL(ONYX_LOAD_CONCAT(onyx_load_statusor_, __LINE__), lhs, expr)
