#include "graph/graph_cleanup.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/status_macros.h"

namespace onyx {
namespace {

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  if (!node.name().empty()) return absl::StrCat(node.op_type(), " '", node.name(), "'");
  return absl::StrCat(node.op_type(), " (node #", index, ")");
}

// Names a node's subgraphs read from enclosing scopes: every name used inside
// that the subgraph (or a nested one) does not define itself.
void CollectOuterReads(const onnx::GraphProto& graph, std::set<std::string>& reads) {
  std::set<std::string> defined;
  for (const auto& vi : graph.input()) defined.insert(vi.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const auto& node : graph.node()) {
    for (const auto& out : node.output()) defined.insert(out);
  }
  std::set<std::string> used;
  for (const auto& node : graph.node()) {
    for (const auto& in : node.input()) used.insert(in);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectOuterReads(attr.g(), used);
      for (const auto& g : attr.graphs()) CollectOuterReads(g, used);
    }
  }
  for (const auto& out : graph.output()) used.insert(out.name());
  for (const auto& name : used) {
    if (!name.empty() && !defined.count(name)) reads.insert(name);
  }
}

// Every value a node reads: its inputs and its subgraphs' outer reads.
std::set<std::string> NodeReads(const onnx::NodeProto& node) {
  std::set<std::string> reads(node.input().begin(), node.input().end());
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) CollectOuterReads(attr.g(), reads);
    for (const auto& g : attr.graphs()) CollectOuterReads(g, reads);
  }
  reads.erase("");
  return reads;
}

// One cycle among `stuck` (nodes Kahn's algorithm could not place), as labels.
std::vector<std::string> FindCycle(const onnx::GraphProto& graph, const std::vector<std::vector<int>>& deps,
                                   const std::set<int>& stuck) {
  std::map<int, int> state;  // 1 on the DFS stack, 2 done
  std::vector<int> stack;
  std::vector<std::string> cycle;
  std::function<bool(int)> visit = [&](int n) {
    state[n] = 1;
    stack.push_back(n);
    for (int d : deps[n]) {
      if (!stuck.count(d)) continue;
      if (state[d] == 1) {
        auto from = std::find(stack.begin(), stack.end(), d);
        for (auto it = from; it != stack.end(); ++it) cycle.push_back(NodeLabel(graph.node(*it), *it));
        cycle.push_back(NodeLabel(graph.node(d), d));
        return true;
      }
      if (state[d] == 0 && visit(d)) return true;
    }
    stack.pop_back();
    state[n] = 2;
    return false;
  };
  for (int n : stuck) {
    if (state[n] == 0 && visit(n)) break;
  }
  return cycle;
}

}  // namespace

absl::Status SortNodes(onnx::GraphProto& graph) {
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) RETURN_IF_ERROR(SortNodes(*attr.mutable_g()));
      for (auto& g : *attr.mutable_graphs()) RETURN_IF_ERROR(SortNodes(g));
    }
  }
  const int n = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& out : graph.node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  std::vector<std::vector<int>> deps(n);
  std::vector<std::vector<int>> users(n);
  std::vector<int> waiting(n, 0);
  for (int i = 0; i < n; ++i) {
    for (const auto& name : NodeReads(graph.node(i))) {
      auto it = producer.find(name);
      if (it == producer.end() || it->second == i) continue;
      deps[i].push_back(it->second);
      users[it->second].push_back(i);
      ++waiting[i];
    }
  }
  // Kahn's algorithm, always taking the earliest ready node: a sorted graph
  // keeps its order exactly.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i]) {
      if (--waiting[u] == 0) ready.push(u);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    std::set<int> stuck;
    for (int i = 0; i < n; ++i) {
      if (waiting[i] > 0) stuck.insert(i);
    }
    std::vector<std::string> cycle = FindCycle(graph, deps, stuck);
    return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(),
                                                   "' has a cycle: ", absl::StrJoin(cycle, " -> "), " (", stuck.size(),
                                                   " nodes cannot be ordered)"));
  }
  bool sorted = true;
  for (int i = 0; i < n && sorted; ++i) sorted = order[i] == i;
  if (sorted) return absl::OkStatus();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Reserve(n);
  for (int i : order) *nodes.Add() = std::move(*graph.mutable_node(i));
  graph.mutable_node()->Swap(&nodes);
  return absl::OkStatus();
}

PruneCounts PruneUnused(onnx::GraphProto& graph) {
  PruneCounts counts;
  std::set<std::string> live;
  for (const auto& out : graph.output()) live.insert(out.name());
  // Nodes are sorted: one backwards pass finds every node an output needs.
  std::vector<bool> keep(graph.node_size(), false);
  for (int i = graph.node_size() - 1; i >= 0; --i) {
    const auto& node = graph.node(i);
    bool needed = false;
    for (const auto& out : node.output()) needed |= !out.empty() && live.count(out) > 0;
    if (!needed) continue;
    keep[i] = true;
    for (const auto& name : NodeReads(node)) live.insert(name);
  }
  if (std::find(keep.begin(), keep.end(), false) != keep.end()) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (keep[i]) {
        *nodes.Add() = std::move(*graph.mutable_node(i));
      } else {
        ++counts.nodes;
      }
    }
    graph.mutable_node()->Swap(&nodes);
  }
  std::set<std::string> declared;
  for (const auto& vi : graph.input()) declared.insert(vi.name());
  auto* inits = graph.mutable_initializer();
  const int before = inits->size();
  auto unused = [&](const onnx::TensorProto& t) { return !live.count(t.name()) && !declared.count(t.name()); };
  inits->erase(std::remove_if(inits->begin(), inits->end(), unused), inits->end());
  counts.initializers = before - inits->size();
  return counts;
}

}  // namespace onyx
