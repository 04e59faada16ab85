#include "optimizer/fuse_qdq_matmul.h"

#include <memory>

#include "optimizer/qdq_match.h"

namespace onyx {

absl::StatusOr<bool> FuseQdqMatMul::ApplyImpl(Graph& graph) const {
  bool changed = false;
  // By index: the loop removes nodes that a snapshot would still hold.
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* matmul = graph.node(i);
    if (!IsOp(matmul, "MatMul") || matmul->inputs.size() != 2) continue;
    Node* a_dq = graph.Producer(matmul->inputs[0]);
    Node* b_dq = graph.Producer(matmul->inputs[1]);
    if (!IsOp(a_dq, "DequantizeLinear") || !HasPerTensorQuantParams(graph, *a_dq)) continue;
    const Tensor* b = b_dq != nullptr && !b_dq->inputs.empty() ? ConstantValue(graph, b_dq->inputs[0]) : nullptr;
    if (b == nullptr || b->rank() != 2 || !DequantizesWeightsOneDnnTakes(graph, b_dq, 1, b->dims()[1])) continue;
    Node* q = SoleConsumer(graph, matmul->outputs[0]);
    if (!IsOp(q, "QuantizeLinear") || !HasPerTensorQuantParams(graph, *q)) continue;

    auto fused = std::make_unique<Node>();
    fused->name = matmul->name.empty() ? graph.UniqueValueName("QLinearMatMul") : matmul->name + "_quantized";
    fused->op_type = "QLinearMatMul";
    fused->since_version = 10;
    fused->inputs = {a_dq->inputs[0], a_dq->inputs[1], a_dq->inputs[2],
                     b_dq->inputs[0], b_dq->inputs[1], WeightsZeroPoint(graph, *b_dq),
                     q->inputs[1],    q->inputs[2]};
    fused->outputs = {q->outputs[0]};
    graph.RemoveNode(q->index);
    graph.RemoveNode(matmul->index);
    for (Node* dq : {a_dq, b_dq}) {
      if (graph.Consumers(dq->outputs[0]).empty() && !graph.IsOutput(dq->outputs[0])) graph.RemoveNode(dq->index);
    }
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
