// Custom-operator libraries (onyx/custom_op.h) as an execution provider.
//
//   ASSIGN_OR_RETURN(const CustomOpLibrary* lib, LoadCustomOpLibrary("/opt/ops/libmyops.so"));
//   auto provider = CreateCustomOpProvider({lib});   // before "cpu" in the list
//
// A library is loaded once per path and never unloaded; its ops become
// kernels of a host-memory provider named "custom_ops" that a session lists
// just before CPU, so its nodes are no CPU fallback and need no copies.
// Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "onyx/custom_op.h"

namespace onyx {

struct CustomOpLibrary {
  std::string path;  // canonical
  std::string name;  // the library's own name
  const OnyxCustomOpLibrary* entry = nullptr;
  KernelRegistry registry;  // one kernel per op, provider "custom_ops"
};

// Loads, checks and caches the library at `path`. NOT_FOUND when there is no
// such file; FAILED_PRECONDITION naming the path for a dynamic-loader error,
// a missing entry point, an ABI version other than this onyx's (expected vs
// received), or malformed tables (no domain, an empty or reserved domain, an
// op without a type or function).
absl::StatusOr<const CustomOpLibrary*> LoadCustomOpLibrary(const std::string& path);

// A provider running the ops of `libraries` (kernels of an op found in two
// libraries: the first listed wins).
std::unique_ptr<IExecutionProvider> CreateCustomOpProvider(const std::vector<const CustomOpLibrary*>& libraries);

}  // namespace onyx
