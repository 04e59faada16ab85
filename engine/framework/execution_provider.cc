#include "framework/execution_provider.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onyx {

Capability IExecutionProvider::GetCapability(const Graph& graph) const {
  Capability cap;
  for (const Node* node : graph.Nodes()) {
    if (!node->provider.empty()) continue;
    auto entry = kernel_registry().Lookup(*node, graph);
    if (entry.ok()) {
      cap.nodes.push_back(node->index);
    } else {
      cap.declined[node->index] = std::string(entry.status().message());
    }
  }
  return cap;
}

absl::Status IExecutionProvider::CopyToHost(const Tensor& src, Tensor& dst) const {
  return absl::UnimplementedError(absl::StrCat("provider ", name(), " cannot copy to host"));
}

absl::Status IExecutionProvider::CopyFromHost(const Tensor& src, Tensor& dst) const {
  return absl::UnimplementedError(absl::StrCat("provider ", name(), " cannot copy from host"));
}

void ProviderRegistry::Register(const std::string& name, ProviderFactory factory) {
  absl::MutexLock lock(&mu_);
  factories_[name] = std::move(factory);
}

absl::StatusOr<std::unique_ptr<IExecutionProvider>> ProviderRegistry::Create(const std::string& name,
                                                                             const ProviderOptions& options) const {
  ProviderFactory factory;
  {
    absl::MutexLock lock(&mu_);
    auto it = factories_.find(name);
    if (it == factories_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, f] : factories_) names.push_back(n);
      return absl::NotFoundError(
          absl::StrCat("unknown execution provider '", name, "' (registered: ", absl::StrJoin(names, ", "), ")"));
    }
    factory = it->second;
  }
  return factory(options);
}

bool ProviderRegistry::Contains(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  return factories_.count(name) > 0;
}

std::vector<std::string> ProviderRegistry::Names() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [n, f] : factories_) names.push_back(n);
  return names;
}

}  // namespace onyx
