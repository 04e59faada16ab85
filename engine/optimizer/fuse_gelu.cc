#include "optimizer/fuse_gelu.h"

#include <cmath>

#include "graph/op_domains.h"

namespace onyx {

bool IsScalarConstant(const Graph& graph, const std::string& value, float expected) {
  const Tensor* t = ConstantValue(graph, value);
  if (t == nullptr || t->num_elements() != 1) return false;
  double v;
  switch (t->type()) {
    case DataType::kFloat: v = *t->data<float>(); break;
    case DataType::kDouble: v = *t->data<double>(); break;
    default: return false;
  }
  return std::fabs(v - expected) < 1e-4;
}

namespace {

// `node` is a binary op with `value` as one input; returns the other input.
std::string OtherInput(const Node& node, const std::string& value) {
  if (node.inputs.size() != 2) return "";
  return node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
}

}  // namespace

absl::StatusOr<bool> FuseGelu::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* erf = graph.node(i);
    if (erf == nullptr || !IsOp(erf, "Erf")) continue;
    Node* scale = graph.Producer(erf->inputs[0]);
    if (scale == nullptr || SoleConsumer(graph, scale->outputs[0]) != erf) continue;
    std::string x;
    if (IsNumpyOp(scale, "Div") && IsScalarConstant(graph, scale->inputs[1], 1.4142135f)) {
      x = scale->inputs[0];
    } else if (IsNumpyOp(scale, "Mul")) {
      for (int i = 0; i < 2; ++i) {
        if (IsScalarConstant(graph, scale->inputs[i], 0.70710678f)) x = scale->inputs[1 - i];
      }
    }
    if (x.empty()) continue;
    Node* add = SoleConsumer(graph, erf->outputs[0]);
    if (!IsNumpyOp(add, "Add") || !IsScalarConstant(graph, OtherInput(*add, erf->outputs[0]), 1.f)) continue;
    Node* mul = SoleConsumer(graph, add->outputs[0]);
    if (!IsNumpyOp(mul, "Mul")) continue;
    std::string other = OtherInput(*mul, add->outputs[0]);
    Node* last = nullptr;
    Node* half = nullptr;
    if (other == x) {  // (x * (1 + erf)) * 0.5
      last = SoleConsumer(graph, mul->outputs[0]);
      if (!IsNumpyOp(last, "Mul") || !IsScalarConstant(graph, OtherInput(*last, mul->outputs[0]), 0.5f)) continue;
    } else {  // (0.5 * x) * (1 + erf)
      half = graph.Producer(other);
      if (!IsNumpyOp(half, "Mul") || SoleConsumer(graph, other) != mul) continue;
      if (!((half->inputs[0] == x && IsScalarConstant(graph, half->inputs[1], 0.5f)) ||
            (half->inputs[1] == x && IsScalarConstant(graph, half->inputs[0], 0.5f)))) {
        continue;
      }
      last = mul;
    }
    auto gelu = std::make_unique<Node>();
    gelu->name = graph.UniqueValueName("Gelu");
    gelu->op_type = "Gelu";
    gelu->domain = kOnyxDomain;
    gelu->inputs = {x};
    gelu->outputs = {last->outputs[0]};
    for (Node* n : {scale, erf, add, mul, last, half}) {
      if (n != nullptr && graph.node(n->index) != nullptr) graph.RemoveNode(n->index);
    }
    graph.AddNode(std::move(gelu));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
