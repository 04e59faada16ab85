// Error-propagation macros for absl::Status / absl::StatusOr.
//
//   RETURN_IF_ERROR(DoThing());
//   ASSIGN_OR_RETURN(auto value, ComputeValue());
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ONYX_CONCAT_INNER(a, b) a##b
#define ONYX_CONCAT(a, b) ONYX_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::absl::Status onyx_status_ = (expr);        \
    if (!onyx_status_.ok()) return onyx_status_; \
  } while (0)

#define ONYX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ONYX_ASSIGN_OR_RETURN_IMPL(ONYX_CONCAT(onyx_statusor_, __LINE__), lhs, expr)
