// KernelRegistry: (op type, domain, opset range, type constraints) -> factory.
//
//   KernelRegistry registry;
//   registry.Register(KernelDefBuilder("Relu").Since(14).Types("T", kFloatTypes).Build(),
//                     MakeFactory<Relu>());
//   ASSIGN_OR_RETURN(const KernelRegistry::Entry* e, registry.Lookup(node, graph));
//
// A miss explains itself: no kernel for the op, the domain is not served, the
// node's opset version is not covered, or an input/output type is not supported.
// Thread-compatible: register everything first, then look up from many threads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/kernel_def.h"
#include "framework/op_kernel.h"

namespace onyx {

class KernelRegistry {
 public:
  struct Entry {
    KernelDef def;
    KernelFactory factory;
  };

  void Register(KernelDef def, KernelFactory factory);

  // The first registered kernel matching the node; NOT_FOUND with the reason.
  absl::StatusOr<const Entry*> Lookup(const Node& node, const Graph& graph) const;

  // Every kernel registered for (domain, op type), in registration order.
  std::vector<const Entry*> Entries(const std::string& domain, const std::string& op_type) const;

  // Every (domain, op type) with at least one kernel.
  std::vector<std::pair<std::string, std::string>> Ops() const;
  size_t size() const { return count_; }

 private:
  // (domain, op_type) -> candidates in registration order.
  std::map<std::pair<std::string, std::string>, std::vector<Entry>> kernels_;
  size_t count_ = 0;
};

}  // namespace onyx
