#include "optimizer/fuse_qdq_conv.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/qdq_match.h"

namespace onyx {
namespace {

// The bias's DequantizeLinear: an int32 constant whose scale is x_scale * w_scale.
bool BiasMatches(const Graph& graph, const Node* dq, float x_scale, const Tensor& w_scale, int64_t out_channels) {
  if (!IsOp(dq, "DequantizeLinear") || dq->inputs.size() < 2) return false;
  const Tensor* b = ConstantValue(graph, dq->inputs[0]);
  const Tensor* scale = ConstantValue(graph, dq->inputs[1]);
  if (b == nullptr || b->type() != DataType::kInt32 || b->num_elements() != out_channels || scale == nullptr ||
      scale->type() != DataType::kFloat) {
    return false;
  }
  if (dq->inputs.size() > 2 && !dq->inputs[2].empty()) {
    const Tensor* zp = ConstantValue(graph, dq->inputs[2]);
    if (zp == nullptr) return false;
    for (int64_t i = 0; i < zp->num_elements(); ++i) {
      if (zp->data<int32_t>()[i] != 0) return false;
    }
  }
  for (int64_t oc = 0; oc < out_channels; ++oc) {
    const float want = x_scale * w_scale.data<float>()[w_scale.num_elements() == 1 ? 0 : oc];
    const float have = scale->data<float>()[scale->num_elements() == 1 ? 0 : oc];
    if (std::fabs(have - want) > 1e-6f * std::fabs(want)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseQdqConv::ApplyImpl(Graph& graph) const {
  bool changed = false;
  // By index: the loop removes nodes that a snapshot would still hold.
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* conv = graph.node(i);
    if (!IsOp(conv, "Conv") || conv->inputs.size() < 2) continue;
    Node* x_dq = graph.Producer(conv->inputs[0]);
    Node* w_dq = graph.Producer(conv->inputs[1]);
    if (!IsOp(x_dq, "DequantizeLinear") || !HasPerTensorQuantParams(graph, *x_dq)) continue;
    const Tensor* w_q = w_dq != nullptr && !w_dq->inputs.empty() ? ConstantValue(graph, w_dq->inputs[0]) : nullptr;
    if (w_q == nullptr || !DequantizesWeightsOneDnnTakes(graph, w_dq, 0, w_q->dims()[0])) continue;
    const Tensor& w_scale = *ConstantValue(graph, w_dq->inputs[1]);
    const float x_scale = *ConstantValue(graph, x_dq->inputs[1])->data<float>();
    Node* b_dq = conv->inputs.size() > 2 && !conv->inputs[2].empty() ? graph.Producer(conv->inputs[2]) : nullptr;
    if (conv->inputs.size() > 2 && !conv->inputs[2].empty() &&
        !BiasMatches(graph, b_dq, x_scale, w_scale, w_q->dims()[0])) {
      continue;
    }
    // The output's QuantizeLinear, possibly after a Relu it makes redundant.
    Node* next = SoleConsumer(graph, conv->outputs[0]);
    Node* relu = nullptr;
    if (IsOp(next, "Relu")) {
      relu = next;
      next = SoleConsumer(graph, relu->outputs[0]);
    }
    if (!IsOp(next, "QuantizeLinear") || !HasPerTensorQuantParams(graph, *next)) continue;
    if (relu != nullptr && !ZeroPointIsTypeMinimum(*ConstantValue(graph, next->inputs[2]))) continue;

    auto fused = std::make_unique<Node>();
    fused->name = conv->name.empty() ? graph.UniqueValueName("QLinearConv") : conv->name + "_quantized";
    fused->op_type = "QLinearConv";
    fused->since_version = 10;
    fused->inputs = {x_dq->inputs[0], x_dq->inputs[1], x_dq->inputs[2],
                     w_dq->inputs[0], w_dq->inputs[1], WeightsZeroPoint(graph, *w_dq),
                     next->inputs[1], next->inputs[2]};
    if (b_dq != nullptr) fused->inputs.push_back(b_dq->inputs[0]);
    fused->outputs = {next->outputs[0]};
    fused->attributes = conv->attributes;
    // The dequantized values die with the Conv unless something else reads
    // them (dead-node removal takes the DequantizeLinears then).
    graph.RemoveNode(next->index);
    if (relu != nullptr) graph.RemoveNode(relu->index);
    graph.RemoveNode(conv->index);
    for (Node* dq : {x_dq, w_dq, b_dq}) {
      if (dq != nullptr && graph.Consumers(dq->outputs[0]).empty() && !graph.IsOutput(dq->outputs[0])) {
        graph.RemoveNode(dq->index);
      }
    }
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
