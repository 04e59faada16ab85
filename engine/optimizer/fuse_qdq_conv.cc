#include "optimizer/fuse_qdq_conv.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace onyx {
namespace {

bool IsScalar(const Tensor* t) { return t != nullptr && t->num_elements() == 1; }

int64_t IntAttrOr(const Node& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = node.FindAttribute(name);
  return a != nullptr ? a->i() : fallback;
}

// A Q/DQ node with constant scalar scale and zero point (both present), not blocked.
bool PerTensorConstants(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 3 || node.inputs[2].empty() || IntAttrOr(node, "block_size", 0) != 0) return false;
  const Tensor* scale = ConstantValue(graph, node.inputs[1]);
  const Tensor* zp = ConstantValue(graph, node.inputs[2]);
  return IsScalar(scale) && scale->type() == DataType::kFloat && IsScalar(zp) &&
         (zp->type() == DataType::kUint8 || zp->type() == DataType::kInt8);
}

// The weights' DequantizeLinear: a constant int8 (zero point 0) or uint8 (zero
// point 128) tensor, per tensor or per output channel on axis 0.
bool WeightsOneDnnTakes(const Graph& graph, const Node* dq, int64_t out_channels) {
  if (!IsOp(dq, "DequantizeLinear") || dq->inputs.size() < 2 || IntAttrOr(*dq, "block_size", 0) != 0) return false;
  const Tensor* w = ConstantValue(graph, dq->inputs[0]);
  const Tensor* scale = ConstantValue(graph, dq->inputs[1]);
  const Tensor* zp = dq->inputs.size() > 2 && !dq->inputs[2].empty() ? ConstantValue(graph, dq->inputs[2]) : nullptr;
  if (w == nullptr || w->rank() < 3 || scale == nullptr || scale->type() != DataType::kFloat) return false;
  if (dq->inputs.size() > 2 && !dq->inputs[2].empty() && zp == nullptr) return false;
  if (w->type() != DataType::kInt8 && w->type() != DataType::kUint8) return false;
  if (zp != nullptr && zp->type() != w->type()) return false;
  const int64_t n = scale->num_elements();
  if (n != 1) {
    int64_t axis = IntAttrOr(*dq, "axis", 1);
    if (axis < 0) axis += w->rank();
    if (axis != 0 || n != out_channels || (zp != nullptr && zp->num_elements() != n)) return false;
  }
  const int32_t needed = w->type() == DataType::kInt8 ? 0 : 128;
  for (int64_t i = 0; i < (zp == nullptr ? 0 : zp->num_elements()); ++i) {
    const int32_t v = w->type() == DataType::kInt8 ? zp->data<int8_t>()[i] : zp->data<uint8_t>()[i];
    if (v != needed) return false;
  }
  return zp != nullptr || needed == 0;
}

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

bool ZeroPointIsTypeMinimum(const Tensor& zp) {
  return zp.type() == DataType::kUint8 ? zp.data<uint8_t>()[0] == 0 : zp.data<int8_t>()[0] == -128;
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
    if (!IsOp(x_dq, "DequantizeLinear") || !PerTensorConstants(graph, *x_dq)) continue;
    const Tensor* w_q = w_dq != nullptr && !w_dq->inputs.empty() ? ConstantValue(graph, w_dq->inputs[0]) : nullptr;
    if (w_q == nullptr || !WeightsOneDnnTakes(graph, w_dq, w_q->dims()[0])) continue;
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
    if (!IsOp(next, "QuantizeLinear") || !PerTensorConstants(graph, *next)) continue;
    if (relu != nullptr && !ZeroPointIsTypeMinimum(*ConstantValue(graph, next->inputs[2]))) continue;

    auto fused = std::make_unique<Node>();
    fused->name = conv->name.empty() ? graph.UniqueValueName("QLinearConv") : conv->name + "_quantized";
    fused->op_type = "QLinearConv";
    fused->since_version = 10;
    fused->inputs = {x_dq->inputs[0], x_dq->inputs[1], x_dq->inputs[2],
                     w_dq->inputs[0], w_dq->inputs[1], w_dq->inputs.size() > 2 ? w_dq->inputs[2] : "",
                     next->inputs[1], next->inputs[2]};
    if (fused->inputs[5].empty()) {
      // int8 weights without a zero point: QLinearConv requires one.
      std::string zp = graph.UniqueValueName(w_dq->inputs[0] + "_zero_point");
      Tensor zero = Tensor::Allocate(DataType::kInt8, {});
      zero.mutable_data<int8_t>()[0] = 0;
      graph.SetInitializer(zp, std::move(zero));
      fused->inputs[5] = zp;
    }
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
