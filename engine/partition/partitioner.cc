#include "partition/partitioner.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"

namespace onyx {
namespace {

const IExecutionProvider* FindProvider(const std::vector<const IExecutionProvider*>& providers,
                                       const std::string& name) {
  for (const auto* p : providers) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

std::string DeviceOf(const std::vector<const IExecutionProvider*>& providers, const std::string& name) {
  const IExecutionProvider* p = FindProvider(providers, name);
  return p == nullptr ? std::string("cpu") : std::string(p->device());
}

// Inserts a copy for every value whose producer and consumer live on different
// devices. Graph inputs, initializers and graph outputs live in host memory.
int64_t InsertMemcpyNodes(Graph& graph, const std::vector<const IExecutionProvider*>& providers) {
  int64_t copies = 0;
  std::map<std::string, std::string> value_device;  // value -> device of its producer
  std::map<std::string, std::string> value_provider;
  for (const Node* n : graph.Nodes()) {
    for (const auto& o : n->outputs) {
      value_device[o] = DeviceOf(providers, n->provider);
      value_provider[o] = n->provider;
    }
  }
  // (value, target device) -> copied value name
  std::map<std::pair<std::string, std::string>, std::string> copies_made;
  auto copy_of = [&](const std::string& value, const std::string& from_device, const std::string& to_device,
                     const std::string& to_provider) -> std::string {
    auto key = std::make_pair(value, to_device);
    auto it = copies_made.find(key);
    if (it != copies_made.end()) return it->second;
    auto node = std::make_unique<Node>();
    node->domain = kOnyxDomain;
    if (from_device == "cpu") {
      node->op_type = "MemcpyFromHost";
      node->provider = to_provider;
    } else {
      node->op_type = "MemcpyToHost";
      node->provider = value_provider[value];
    }
    std::string copied = graph.UniqueValueName(value + "_" + to_device);
    node->name = absl::StrCat(node->op_type, "_", copied);
    node->inputs = {value};
    node->outputs = {copied};
    if (const ValueInfo* info = graph.FindValueInfo(value)) graph.SetValueInfo(copied, *info);
    graph.AddNode(std::move(node));
    ++copies;
    copies_made[key] = copied;
    return copied;
  };
  // Initializers no feed can override: a provider taking constants on host
  // reads them once when its kernel is created, so they need no copy per run.
  std::set<std::string> constants;
  for (const auto& [name, tensor] : graph.initializers()) constants.insert(name);
  for (const auto& d : graph.declared_inputs()) constants.erase(d);
  for (Node* n : graph.Nodes()) {
    if (n->domain == kOnyxDomain && absl::StartsWith(n->op_type, "Memcpy")) continue;
    std::string device = DeviceOf(providers, n->provider);
    const IExecutionProvider* provider = FindProvider(providers, n->provider);
    const bool constants_on_host = provider != nullptr && provider->ConstantInputsOnHost();
    for (auto& in : n->inputs) {
      if (in.empty()) continue;
      if (constants_on_host && constants.count(in)) continue;
      auto it = value_device.find(in);
      std::string from = it == value_device.end() ? "cpu" : it->second;
      if (from != device) in = copy_of(in, from, device, n->provider);
    }
  }
  for (auto& out : graph.mutable_outputs()) {
    auto it = value_device.find(out);
    if (it == value_device.end() || it->second == "cpu") continue;
    // Rename the producer's output so the graph output keeps its name on host.
    Node* producer = graph.Producer(out);
    std::string device_value = graph.UniqueValueName(out + "_" + it->second);
    for (auto& o : producer->outputs) {
      if (o == out) o = device_value;
    }
    for (Node* c : graph.Consumers(out)) {
      for (auto& in : c->inputs) {
        if (in == out) in = device_value;
      }
    }
    if (const ValueInfo* info = graph.FindValueInfo(out)) graph.SetValueInfo(device_value, *info);
    auto node = std::make_unique<Node>();
    node->domain = kOnyxDomain;
    node->op_type = "MemcpyToHost";
    node->provider = producer->provider;
    node->name = absl::StrCat("MemcpyToHost_", out);
    node->inputs = {device_value};
    node->outputs = {out};
    graph.AddNode(std::move(node));
    ++copies;
  }
  return copies;
}

void AssignSubgraphsToCpu(Graph& graph, const std::string& cpu) {
  for (Node* n : graph.Nodes()) {
    if (n->provider.empty()) n->provider = cpu;
    for (auto& [attr, sub] : n->subgraphs) AssignSubgraphsToCpu(*sub, cpu);
  }
}

// Every node no provider took, grouped by (domain, op, version, input types):
// a model that needs several missing kernels names them all at once, on one
// line (it is logged and printed as one).
absl::Status UnplacedNodesError(const Graph& graph, const std::vector<const Node*>& unplaced,
                                std::map<size_t, std::vector<std::string>>& reasons) {
  auto describe = [&](const Node* n) {
    // An op without a known schema has no resolved version: name the opset
    // the model imports for its domain instead of 0.
    const int64_t version = n->since_version > 0 ? n->since_version : graph.OpsetFor(n->domain);
    std::vector<std::string> types;
    for (const auto& in : n->inputs) {
      const ValueInfo* info = in.empty() ? nullptr : graph.FindValueInfo(in);
      types.push_back(info == nullptr || info->type == DataType::kUndefined ? "?" : DataTypeName(info->type));
    }
    const bool typed = std::any_of(types.begin(), types.end(), [](const std::string& t) { return t != "?"; });
    return absl::StrCat(n->domain.empty() ? "" : n->domain + ".", n->op_type, " (opset version ", version,
                        typed ? absl::StrCat(", inputs ", absl::StrJoin(types, ",")) : "", ")");
  };
  if (unplaced.size() == 1) {
    const Node* n = unplaced[0];
    const int64_t version = n->since_version > 0 ? n->since_version : graph.OpsetFor(n->domain);
    return absl::FailedPreconditionError(absl::StrCat("no execution provider can run ", n->Label(), " (opset version ",
                                                      version, "): ", absl::StrJoin(reasons[n->index], "; ")));
  }
  std::map<std::string, std::vector<const Node*>> groups;
  std::vector<std::string> order;
  for (const Node* n : unplaced) {
    std::string key = describe(n);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(n);
  }
  std::string message = absl::StrCat("no execution provider can run ", unplaced.size(), " nodes (", order.size(),
                                     " unsupported op/version/type combinations):");
  for (size_t k = 0; k < order.size(); ++k) {
    const std::string& key = order[k];
    const auto& nodes = groups[key];
    std::vector<std::string> labels;
    for (size_t i = 0; i < nodes.size() && i < 3; ++i) labels.push_back(nodes[i]->Label());
    if (nodes.size() > 3) labels.push_back(absl::StrCat("and ", nodes.size() - 3, " more"));
    absl::StrAppend(&message, " [", k + 1, "] ", key, " at ", absl::StrJoin(labels, ", "), ": ",
                    absl::StrJoin(reasons[nodes[0]->index], "; "));
  }
  return absl::FailedPreconditionError(message);
}

}  // namespace

absl::StatusOr<PartitionReport> PartitionGraph(Graph& graph, const std::vector<const IExecutionProvider*>& providers) {
  PartitionReport report;
  if (providers.empty()) return absl::InvalidArgumentError("no execution providers");
  const IExecutionProvider* cpu = providers.back();
  // node -> (provider, reason) for preferred providers that declined it.
  std::map<size_t, std::pair<std::string, std::string>> first_decline;
  std::map<size_t, std::vector<std::string>> all_reasons;
  for (const IExecutionProvider* provider : providers) {
    Capability cap = provider->GetCapability(graph);
    for (size_t index : cap.nodes) {
      Node* n = graph.node(index);
      if (n != nullptr && n->provider.empty()) n->provider = std::string(provider->name());
    }
    for (const auto& [index, reason] : cap.declined) {
      all_reasons[index].push_back(absl::StrCat(provider->name(), ": ", reason));
      // Only a provider of another device is one a node "falls back" from.
      if (provider != cpu && std::string_view(provider->device()) != "cpu" && !first_decline.count(index)) {
        first_decline[index] = {std::string(provider->name()), reason};
      }
    }
  }
  std::vector<const Node*> unplaced;
  for (const Node* n : graph.Nodes()) {
    if (n->provider.empty()) {
      unplaced.push_back(n);
      continue;
    }
    const IExecutionProvider* runs_on = FindProvider(providers, n->provider);
    if (runs_on != nullptr && std::string_view(runs_on->device()) == "cpu" && first_decline.count(n->index)) {
      const auto& [provider, reason] = first_decline[n->index];
      report.fallback_nodes.push_back(FallbackNode{n->name.empty() ? absl::StrCat(n->op_type, "#", n->index) : n->name,
                                                   n->op_type, provider, reason});
    }
  }
  if (!unplaced.empty()) return UnplacedNodesError(graph, unplaced, all_reasons);
  for (Node* n : graph.Nodes()) {
    for (auto& [attr, sub] : n->subgraphs) AssignSubgraphsToCpu(*sub, std::string(cpu->name()));
  }
  report.memcpy_nodes = InsertMemcpyNodes(graph, providers);
  ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  std::string previous;
  for (const Node* n : order) {
    report.nodes_per_provider[n->provider]++;
    if (n->provider != previous) ++report.partitions;
    previous = n->provider;
  }
  return report;
}

void CountUnavailableProviderFallback(const Graph& graph, const std::map<std::string, std::string>& unavailable,
                                      PartitionReport& report) {
  if (unavailable.empty()) return;
  report.unavailable_providers.insert(unavailable.begin(), unavailable.end());
  const std::string& provider = unavailable.begin()->first;
  std::set<std::string> counted;
  for (const FallbackNode& f : report.fallback_nodes) counted.insert(f.node);
  for (const Node* n : graph.Nodes()) {
    if ((n->provider != "cpu" && n->provider != "custom_ops") ||
        (n->domain == kOnyxDomain && absl::StartsWith(n->op_type, "Memcpy"))) {
      continue;
    }
    std::string label = n->name.empty() ? absl::StrCat(n->op_type, "#", n->index) : n->name;
    if (!counted.insert(label).second) continue;
    report.fallback_nodes.push_back(
        FallbackNode{std::move(label), n->op_type, provider, "provider unavailable on this host (reason above)"});
  }
}

}  // namespace onyx
