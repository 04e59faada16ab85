#include "optimizer/fuse_recurrent_transposes.h"

#include "graph/op_domains.h"

namespace onyx {
namespace {

// The perm attribute of a Transpose, empty when absent (the axes reversed).
std::vector<int64_t> PermOf(const Node& transpose) {
  const auto* attr = transpose.FindAttribute("perm");
  if (attr == nullptr) return {};
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

void SetInt(Node& node, const char* name, int64_t value) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
  node.attributes[name] = std::move(attr);
}

bool IsRecurrent(const Node* node) { return IsOp(node, "LSTM") || IsOp(node, "GRU") || IsOp(node, "RNN"); }

}  // namespace

absl::StatusOr<bool> FuseRecurrentTransposes::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* layer = graph.node(i);
    if (!IsRecurrent(layer) || layer->inputs.empty() || layer->inputs[0].empty()) continue;
    if (const auto* layout = layer->FindAttribute("layout"); layout != nullptr && layout->i() != 0) continue;

    Node* x_transpose = graph.Producer(layer->inputs[0]);
    if (!IsOp(x_transpose, "Transpose") || PermOf(*x_transpose) != std::vector<int64_t>{1, 0, 2} ||
        SoleConsumer(graph, x_transpose->outputs[0]) != layer) {
      x_transpose = nullptr;
    }
    Node* y_transpose = nullptr;
    int64_t y_layout = 0;
    if (!layer->outputs.empty() && !layer->outputs[0].empty()) {
      Node* next = SoleConsumer(graph, layer->outputs[0]);
      if (IsOp(next, "Transpose")) {
        const std::vector<int64_t> perm = PermOf(*next);
        if (perm == std::vector<int64_t>{0, 2, 1, 3}) y_layout = 2;
        if (perm == std::vector<int64_t>{2, 0, 1, 3}) y_layout = 1;
        if (y_layout != 0) y_transpose = next;
      }
    }
    if (x_transpose == nullptr && y_transpose == nullptr) continue;

    auto fused = std::make_unique<Node>();
    fused->name = layer->name;
    fused->op_type = layer->op_type;
    fused->domain = kOnyxDomain;
    fused->inputs = layer->inputs;
    fused->outputs = layer->outputs;
    fused->attributes = layer->attributes;
    if (x_transpose != nullptr) {
      fused->inputs[0] = x_transpose->inputs[0];
      SetInt(*fused, "x_layout", 1);
    }
    if (y_transpose != nullptr) {
      fused->outputs[0] = y_transpose->outputs[0];
      SetInt(*fused, "y_layout", y_layout);
    }
    if (x_transpose != nullptr) graph.RemoveNode(x_transpose->index);
    if (y_transpose != nullptr) graph.RemoveNode(y_transpose->index);
    graph.RemoveNode(layer->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
