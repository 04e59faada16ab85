#include "optimizer/fuse_conv_activation.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "graph/op_domains.h"

namespace onyx {
namespace {

bool SameKnownShape(const Graph& graph, const std::string& a, const std::string& b) {
  const ValueInfo* x = graph.FindValueInfo(a);
  const ValueInfo* y = graph.FindValueInfo(b);
  if (x == nullptr || y == nullptr || !x->has_shape || !y->has_shape || x->dims.size() != y->dims.size()) {
    return false;
  }
  // Equal fixed dims, or the same symbolic dim (e.g. both "batch").
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (x->dims[i] >= 0 && x->dims[i] == y->dims[i]) continue;
    if (x->dims[i] < 0 && y->dims[i] < 0 && !x->dim_params[i].empty() && x->dim_params[i] == y->dim_params[i]) {
      continue;
    }
    return false;
  }
  return true;
}

// The activation `next` applies to `value` (its only data input), as the
// FusedConv attributes name it, or nullopt when it is not one a fused
// convolution runs. Clip's bounds must be constants.
struct Activation {
  std::string name;
  std::vector<float> params;
  Node* last = nullptr;  // the node whose output the fused node takes over
  std::vector<Node*> removed;
};

std::optional<Activation> MatchActivation(const Graph& graph, Node* next) {
  if (next == nullptr) return std::nullopt;
  auto attr_f = [&](const char* name, float fallback) {
    const onnx::AttributeProto* a = next->FindAttribute(name);
    return a != nullptr ? a->f() : fallback;
  };
  if (IsOp(next, "Relu")) return Activation{"Relu", {}, next, {next}};
  if (IsOp(next, "LeakyRelu")) return Activation{"LeakyRelu", {attr_f("alpha", 0.01f)}, next, {next}};
  if (IsOp(next, "Sigmoid")) return Activation{"Sigmoid", {}, next, {next}};
  if (IsOp(next, "HardSwish")) return Activation{"HardSwish", {}, next, {next}};
  if (IsOp(next, "HardSigmoid")) {
    return Activation{"HardSigmoid", {attr_f("alpha", 0.2f), attr_f("beta", 0.5f)}, next, {next}};
  }
  if (IsOp(next, "Clip")) {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (next->since_version > 0 && next->since_version < 11) {
      lo = attr_f("min", lo);
      hi = attr_f("max", hi);
    } else {
      for (size_t i = 1; i < next->inputs.size() && i < 3; ++i) {
        if (next->inputs[i].empty()) continue;
        const Tensor* bound = ConstantValue(graph, next->inputs[i]);
        if (bound == nullptr || bound->type() != DataType::kFloat || bound->num_elements() != 1) return std::nullopt;
        (i == 1 ? lo : hi) = *bound->data<float>();
      }
    }
    return Activation{"Clip", {lo, hi}, next, {next}};
  }
  return std::nullopt;
}

// x * Sigmoid(x) (SiLU, written by exporters as two nodes): `value` read by
// exactly a Sigmoid and a Mul of the value and the Sigmoid's output.
std::optional<Activation> MatchSwish(const Graph& graph, const std::string& value) {
  if (graph.IsOutput(value)) return std::nullopt;
  std::vector<Node*> readers = graph.Consumers(value);
  if (readers.size() != 2) return std::nullopt;
  Node* sigmoid = IsOp(readers[0], "Sigmoid") ? readers[0] : IsOp(readers[1], "Sigmoid") ? readers[1] : nullptr;
  if (sigmoid == nullptr) return std::nullopt;
  Node* mul = readers[0] == sigmoid ? readers[1] : readers[0];
  if (!IsNumpyOp(mul, "Mul") || SoleConsumer(graph, sigmoid->outputs[0]) != mul) return std::nullopt;
  const bool pair = (mul->inputs[0] == value && mul->inputs[1] == sigmoid->outputs[0]) ||
                    (mul->inputs[1] == value && mul->inputs[0] == sigmoid->outputs[0]);
  if (!pair) return std::nullopt;
  return Activation{"Swish", {1.f}, mul, {sigmoid, mul}};
}

}  // namespace

std::optional<MatchedActivation> MatchSingleNodeActivation(const Graph& graph, const Node* next) {
  std::optional<Activation> act = MatchActivation(graph, const_cast<Node*>(next));
  if (!act) return std::nullopt;
  return MatchedActivation{act->name, act->params};
}

absl::StatusOr<bool> FuseConvActivation::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* conv = graph.node(i);
    if (conv == nullptr || !IsOp(conv, "Conv")) continue;
    const ValueInfo* out = graph.FindValueInfo(conv->outputs[0]);
    if (out == nullptr || out->type != DataType::kFloat) continue;
    std::string value = conv->outputs[0];
    Node* next = SoleConsumer(graph, value);
    std::string residual;
    Node* add = nullptr;
    if (IsNumpyOp(next, "Add") && next->inputs[0] != next->inputs[1]) {
      residual = next->inputs[0] == value ? next->inputs[1] : next->inputs[0];
      if (SameKnownShape(graph, residual, value)) {
        add = next;
        value = add->outputs[0];
        next = SoleConsumer(graph, value);
      } else {
        residual.clear();
      }
    }
    std::optional<Activation> act = MatchActivation(graph, next);
    if (!act) act = MatchSwish(graph, value);
    if (!act && add == nullptr) continue;
    auto fused = std::make_unique<Node>();
    fused->name = conv->name.empty() ? graph.UniqueValueName("FusedConv") : conv->name + "_fused";
    fused->op_type = "FusedConv";
    fused->domain = kOnyxDomain;
    fused->inputs = conv->inputs;
    fused->inputs.resize(3);
    if (add != nullptr) fused->inputs.push_back(residual);
    fused->outputs = {act ? act->last->outputs[0] : add->outputs[0]};
    fused->attributes = conv->attributes;
    if (act) SetActivation(*fused, act->name, act->params);
    if (act) {
      for (Node* n : act->removed) graph.RemoveNode(n->index);
    }
    if (add != nullptr) graph.RemoveNode(add->index);
    graph.RemoveNode(conv->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
