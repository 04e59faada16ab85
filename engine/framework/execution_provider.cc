#include "framework/execution_provider.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

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

namespace {
struct RegistryState {
  absl::Mutex mu;
  std::map<std::string, ProviderFactory> factories ABSL_GUARDED_BY(mu);
};
RegistryState& State() {
  static RegistryState* state = new RegistryState();
  return *state;
}
}  // namespace

ProviderRegistry& ProviderRegistry::Global() {
  static ProviderRegistry registry;
  return registry;
}

void ProviderRegistry::Register(const std::string& name, ProviderFactory factory) {
  absl::MutexLock lock(&State().mu);
  State().factories[name] = std::move(factory);
}

absl::StatusOr<std::unique_ptr<IExecutionProvider>> ProviderRegistry::Create(
    const std::string& name, const ProviderOptions& options) const {
  ProviderFactory factory;
  {
    absl::MutexLock lock(&State().mu);
    auto it = State().factories.find(name);
    if (it == State().factories.end()) {
      std::vector<std::string> names;
      for (const auto& [n, f] : State().factories) names.push_back(n);
      return absl::NotFoundError(absl::StrCat("unknown execution provider '", name,
                                              "' (registered: ", absl::StrJoin(names, ", "), ")"));
    }
    factory = it->second;
  }
  return factory(options);
}

std::vector<std::string> ProviderRegistry::Names() const {
  absl::MutexLock lock(&State().mu);
  std::vector<std::string> names;
  for (const auto& [n, f] : State().factories) names.push_back(n);
  return names;
}

}  // namespace onyx
