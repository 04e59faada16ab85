#include "optimizer/eliminate_identity.h"

namespace onyx {

absl::StatusOr<bool> EliminateIdentity::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (Node* n : graph.Nodes()) {
    if (n->op_type != "Identity" || !n->domain.empty()) continue;
    // A graph input passed straight to a graph output must keep its Identity.
    if (graph.IsOutput(n->outputs[0]) && graph.Producer(n->inputs[0]) == nullptr) continue;
    changed |= BypassNode(graph, *n);
  }
  return changed;
}

}  // namespace onyx
