#include "optimizer/eliminate_noop_pad.h"

namespace onyx {
namespace {

// True when every pad is provably zero.
bool ZeroPads(const Graph& graph, const Node& pad) {
  if (pad.since_version > 0 && pad.since_version < 11) {
    const auto* pads = pad.FindAttribute("pads");
    if (pads == nullptr) return false;
    for (int64_t p : pads->ints()) {
      if (p != 0) return false;
    }
    return true;
  }
  if (pad.inputs.size() < 2) return false;
  const Tensor* pads = ConstantValue(graph, pad.inputs[1]);
  if (pads == nullptr || pads->type() != DataType::kInt64) return false;
  for (int64_t i = 0; i < pads->num_elements(); ++i) {
    if (pads->data<int64_t>()[i] != 0) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> EliminateNoopPad::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (Node* n : graph.Nodes()) {
    if (!IsOp(n, "Pad") || n->inputs.empty() || n->outputs.size() != 1 || !ZeroPads(graph, *n)) continue;
    if (graph.IsOutput(n->outputs[0]) && graph.Producer(n->inputs[0]) == nullptr) continue;
    n->inputs.resize(1);
    changed |= BypassNode(graph, *n);
  }
  return changed;
}

}  // namespace onyx
