#include "optimizer/fuse_conv_activation.h"

#include "partition/partitioner.h"

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

}  // namespace

absl::StatusOr<bool> FuseConvActivation::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* conv = graph.node(i);
    if (conv == nullptr || !IsOp(conv, "Conv")) continue;
    const ValueInfo* out = graph.FindValueInfo(conv->outputs[0]);
    if (out == nullptr || out->type != DataType::kFloat) continue;
    Node* next = SoleConsumer(graph, conv->outputs[0]);
    std::string residual;
    Node* add = nullptr;
    if (IsNumpyOp(next, "Add")) {
      residual = next->inputs[0] == conv->outputs[0] ? next->inputs[1] : next->inputs[0];
      if (!SameKnownShape(graph, residual, conv->outputs[0])) continue;
      add = next;
      next = SoleConsumer(graph, add->outputs[0]);
    }
    if (!IsOp(next, "Relu")) continue;
    auto fused = std::make_unique<Node>();
    fused->name = conv->name.empty() ? graph.UniqueValueName("FusedConv") : conv->name + "_fused";
    fused->op_type = "FusedConv";
    fused->domain = kOnyxDomain;
    fused->inputs = conv->inputs;
    fused->inputs.resize(3);
    if (add != nullptr) fused->inputs.push_back(residual);
    fused->outputs = {next->outputs[0]};
    fused->attributes = conv->attributes;
    SetReluActivation(*fused);
    graph.RemoveNode(next->index);
    if (add != nullptr) graph.RemoveNode(add->index);
    graph.RemoveNode(conv->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
