#include "optimizer/qdq_match.h"

#include "optimizer/graph_transformer.h"

namespace onyx {
namespace {

bool IsScalar(const Tensor* t) { return t != nullptr && t->num_elements() == 1; }

int64_t IntAttrOr(const Node& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = node.FindAttribute(name);
  return a != nullptr ? a->i() : fallback;
}

}  // namespace

bool HasPerTensorQuantParams(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 3 || node.inputs[2].empty() || IntAttrOr(node, "block_size", 0) != 0) return false;
  const Tensor* scale = ConstantValue(graph, node.inputs[1]);
  const Tensor* zp = ConstantValue(graph, node.inputs[2]);
  return IsScalar(scale) && scale->type() == DataType::kFloat && IsScalar(zp) &&
         (zp->type() == DataType::kUint8 || zp->type() == DataType::kInt8);
}

bool DequantizesWeightsOneDnnTakes(const Graph& graph, const Node* dq, int64_t axis, int64_t channels) {
  if (!IsOp(dq, "DequantizeLinear") || dq->inputs.size() < 2 || IntAttrOr(*dq, "block_size", 0) != 0) return false;
  const Tensor* w = ConstantValue(graph, dq->inputs[0]);
  const Tensor* scale = ConstantValue(graph, dq->inputs[1]);
  const bool has_zp = dq->inputs.size() > 2 && !dq->inputs[2].empty();
  const Tensor* zp = has_zp ? ConstantValue(graph, dq->inputs[2]) : nullptr;
  if (w == nullptr || scale == nullptr || scale->type() != DataType::kFloat || (has_zp && zp == nullptr)) return false;
  if (w->type() != DataType::kInt8 && w->type() != DataType::kUint8) return false;
  if (zp != nullptr && zp->type() != w->type()) return false;
  const int64_t n = scale->num_elements();
  if (n != 1) {
    int64_t dq_axis = IntAttrOr(*dq, "axis", 1);
    if (dq_axis < 0) dq_axis += w->rank();
    if (dq_axis != axis || n != channels || (zp != nullptr && zp->num_elements() != n)) return false;
  }
  const int32_t needed = w->type() == DataType::kInt8 ? 0 : 128;
  for (int64_t i = 0; i < (zp == nullptr ? 0 : zp->num_elements()); ++i) {
    const int32_t v = w->type() == DataType::kInt8 ? zp->data<int8_t>()[i] : zp->data<uint8_t>()[i];
    if (v != needed) return false;
  }
  return zp != nullptr || needed == 0;
}

bool ZeroPointIsTypeMinimum(const Tensor& zero_point) {
  return zero_point.type() == DataType::kUint8 ? zero_point.data<uint8_t>()[0] == 0
                                               : zero_point.data<int8_t>()[0] == -128;
}

std::string WeightsZeroPoint(Graph& graph, const Node& dq) {
  if (dq.inputs.size() > 2 && !dq.inputs[2].empty()) return dq.inputs[2];
  const Tensor* scale = ConstantValue(graph, dq.inputs[1]);
  std::string name = graph.UniqueValueName(dq.inputs[0] + "_zero_point");
  Tensor zero = Tensor::Allocate(DataType::kInt8, scale->dims());
  for (int64_t i = 0; i < zero.num_elements(); ++i) zero.mutable_data<int8_t>()[i] = 0;
  graph.SetInitializer(name, std::move(zero));
  return name;
}

}  // namespace onyx
