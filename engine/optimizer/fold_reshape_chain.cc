#include "optimizer/fold_reshape_chain.h"

#include <algorithm>

namespace onyx {
namespace {

// Constant axes of Squeeze/Unsqueeze, sorted; false when not constant.
bool Axes(const Graph& graph, const Node& n, std::vector<int64_t>* axes) {
  if (const auto* a = n.FindAttribute("axes")) {
    axes->assign(a->ints().begin(), a->ints().end());
  } else if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const Tensor* t = ConstantValue(graph, n.inputs[1]);
    if (t == nullptr || t->type() != DataType::kInt64) return false;
    axes->assign(t->data<int64_t>(), t->data<int64_t>() + t->num_elements());
  } else {
    return false;
  }
  std::sort(axes->begin(), axes->end());
  return !axes->empty() && (*axes)[0] >= 0;  // negative axes depend on rank: leave them
}

}  // namespace

absl::StatusOr<bool> FoldReshapeChain::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* inner = graph.node(i);
    if (inner == nullptr) continue;
    Node* outer = SoleConsumer(graph, inner->outputs[0]);
    if (outer == nullptr || outer->inputs[0] != inner->outputs[0]) continue;
    if (IsOp(inner, "Reshape") && IsOp(outer, "Reshape") && outer->inputs.size() > 1) {
      const Tensor* shape = ConstantValue(graph, outer->inputs[1]);
      if (shape == nullptr || shape->type() != DataType::kInt64) continue;
      const int64_t* s = shape->data<int64_t>();
      if (std::find(s, s + shape->num_elements(), 0) != s + shape->num_elements()) continue;
      outer->inputs[0] = inner->inputs[0];
      graph.RemoveNode(inner->index);
      changed = true;
      continue;
    }
    bool pair =
        (IsOp(inner, "Squeeze") && IsOp(outer, "Unsqueeze")) || (IsOp(inner, "Unsqueeze") && IsOp(outer, "Squeeze"));
    if (!pair) continue;
    std::vector<int64_t> a1, a2;
    if (!Axes(graph, *inner, &a1) || !Axes(graph, *outer, &a2) || a1 != a2) continue;
    const std::string x = inner->inputs[0];
    const std::string y = outer->outputs[0];
    if (graph.IsOutput(y)) continue;
    ReplaceValueUses(graph, y, x);
    graph.RemoveNode(outer->index);
    graph.RemoveNode(inner->index);
    changed = true;
  }
  return changed;
}

}  // namespace onyx
