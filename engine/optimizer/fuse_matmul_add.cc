#include "optimizer/fuse_matmul_add.h"

#include "graph/op_domains.h"

namespace onyx {

absl::StatusOr<bool> FuseMatMulAdd::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* mm = graph.node(i);
    if (mm == nullptr || !IsOp(mm, "MatMul")) continue;
    const Tensor* b = ConstantValue(graph, mm->inputs[1]);
    if (b == nullptr || b->rank() != 2 || b->type() != DataType::kFloat) continue;
    // A's rank decides whether a [1, ..., 1, N] bias keeps the product's
    // shape; a [N] bias always does, so A's shape may be unknown then (an
    // exporter's dynamic Reshape before a projection hides it).
    const ValueInfo* a = graph.FindValueInfo(mm->inputs[0]);
    const bool a_known = a != nullptr && a->has_shape;
    if (a_known && (a->dims.size() < 2 || a->type != DataType::kFloat)) continue;
    Node* add = SoleConsumer(graph, mm->outputs[0]);
    if (!IsNumpyOp(add, "Add")) continue;
    const std::string bias_name = add->inputs[0] == mm->outputs[0] ? add->inputs[1] : add->inputs[0];
    const Tensor* bias = ConstantValue(graph, bias_name);
    if (bias == nullptr || bias->type() != DataType::kFloat || bias->num_elements() != b->dims()[1]) continue;
    // The bias must broadcast along the last axis only: [N] or [1, ..., 1, N].
    bool row_bias = bias->rank() >= 1 && bias->dims().back() == b->dims()[1] &&
                    (a_known ? bias->rank() <= static_cast<int64_t>(a->dims.size()) : bias->rank() == 1);
    if (!row_bias) continue;
    auto fused = std::make_unique<Node>();
    fused->name = mm->name.empty() ? graph.UniqueValueName("FusedMatMul") : mm->name + "_bias";
    fused->op_type = "FusedMatMul";
    fused->domain = kOnyxDomain;
    fused->inputs = {mm->inputs[0], mm->inputs[1], bias_name};
    fused->outputs = {add->outputs[0]};
    graph.RemoveNode(add->index);
    graph.RemoveNode(mm->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
