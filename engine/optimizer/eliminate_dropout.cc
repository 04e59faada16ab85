#include "optimizer/eliminate_dropout.h"

namespace onyx {

absl::StatusOr<bool> EliminateDropout::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (Node* n : graph.Nodes()) {
    if (n->op_type != "Dropout" || !n->domain.empty()) continue;
    if (n->outputs.size() > 1 && !n->outputs[1].empty() &&
        (graph.IsOutput(n->outputs[1]) || !graph.Consumers(n->outputs[1]).empty())) {
      continue;
    }
    if (n->inputs.size() > 2 && !n->inputs[2].empty()) {
      const Tensor* training = graph.FindInitializer(n->inputs[2]);
      if (training == nullptr || training->type() != DataType::kBool || *training->data<bool>()) continue;
    }
    if (graph.IsOutput(n->outputs[0]) && graph.Producer(n->inputs[0]) == nullptr) continue;
    n->outputs.resize(1);
    changed |= BypassNode(graph, *n);
  }
  return changed;
}

}  // namespace onyx
