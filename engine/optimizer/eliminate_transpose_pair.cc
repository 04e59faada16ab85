#include "optimizer/eliminate_transpose_pair.h"

namespace onyx {
namespace {

std::vector<int64_t> Perm(const Node& n) {
  const auto* a = n.FindAttribute("perm");
  return a == nullptr ? std::vector<int64_t>() : std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

}  // namespace

absl::StatusOr<bool> EliminateTransposePair::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* first = graph.node(i);
    if (first == nullptr || !IsOp(first, "Transpose")) continue;
    Node* second = SoleConsumer(graph, first->outputs[0]);
    if (!IsOp(second, "Transpose")) continue;
    std::vector<int64_t> p1 = Perm(*first), p2 = Perm(*second);
    // Without perm, Transpose reverses the axes: reverse∘reverse is the identity.
    bool inverse = p1.empty() && p2.empty();
    if (!p1.empty() && p1.size() == p2.size()) {
      inverse = true;
      for (size_t i = 0; i < p1.size(); ++i) {
        if (p2[i] < 0 || p2[i] >= static_cast<int64_t>(p1.size()) || p1[p2[i]] != static_cast<int64_t>(i)) {
          inverse = false;
        }
      }
    }
    if (!inverse) continue;
    const std::string x = first->inputs[0];
    const std::string y = second->outputs[0];
    if (graph.IsOutput(y)) continue;
    ReplaceValueUses(graph, y, x);
    graph.RemoveNode(second->index);
    graph.RemoveNode(first->index);
    changed = true;
  }
  return changed;
}

}  // namespace onyx
