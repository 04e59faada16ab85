#include "optimizer/eliminate_noop_cast.h"

namespace onyx {

absl::StatusOr<bool> EliminateNoopCast::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (Node* n : graph.Nodes()) {
    if (!IsOp(n, "Cast") && !IsOp(n, "CastLike")) continue;
    const ValueInfo* in = graph.FindValueInfo(n->inputs[0]);
    if (in == nullptr || in->type == DataType::kUndefined) continue;
    DataType target = DataType::kUndefined;
    if (n->op_type == "Cast") {
      const auto* to = n->FindAttribute("to");
      if (to == nullptr) continue;
      target = static_cast<DataType>(to->i());
    } else {
      const ValueInfo* like = n->inputs.size() > 1 ? graph.FindValueInfo(n->inputs[1]) : nullptr;
      if (like == nullptr) continue;
      target = like->type;
    }
    if (target != in->type) continue;
    if (graph.IsOutput(n->outputs[0]) && graph.Producer(n->inputs[0]) == nullptr) continue;
    n->inputs.resize(1);
    changed |= BypassNode(graph, *n);
  }
  return changed;
}

}  // namespace onyx
