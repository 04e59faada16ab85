#include "optimizer/fuse_matmul_integer_to_float.h"

#include <memory>
#include <string>

#include "graph/op_domains.h"

namespace onyx {
namespace {

// The number of elements of `value` when its shape is fully known, else -1.
int64_t KnownElements(const Graph& graph, const std::string& value) {
  if (const Tensor* t = graph.FindInitializer(value)) return t->num_elements();
  const ValueInfo* info = graph.FindValueInfo(value);
  if (info == nullptr || !info->has_shape) return -1;
  int64_t n = 1;
  for (int64_t d : info->dims) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

int64_t KnownRank(const Graph& graph, const std::string& value) {
  if (const Tensor* t = graph.FindInitializer(value)) return t->rank();
  const ValueInfo* info = graph.FindValueInfo(value);
  return info == nullptr || !info->has_shape ? -1 : static_cast<int64_t>(info->dims.size());
}

DataType KnownType(const Graph& graph, const std::string& value) {
  if (const Tensor* t = graph.FindInitializer(value)) return t->type();
  const ValueInfo* info = graph.FindValueInfo(value);
  return info == nullptr ? DataType::kUndefined : info->type;
}

// One value for the whole tensor: a scalar or a 1-element vector.
bool PerTensor(const Graph& graph, const std::string& value) {
  return KnownElements(graph, value) == 1 && KnownRank(graph, value) <= 1;
}

// A scalar, or a vector of one value per column of B (N of them).
bool PerTensorOrColumn(const Graph& graph, const std::string& value, int64_t n) {
  if (PerTensor(graph, value)) return true;
  return KnownRank(graph, value) == 1 && KnownElements(graph, value) == n;
}

// The other input of a two-input node, given one of them.
const std::string& OtherInput(const Node& node, const std::string& one) {
  return node.inputs[0] == one ? node.inputs[1] : node.inputs[0];
}

bool CastsToFloat(const Node* cast) {
  if (!IsOp(cast, "Cast")) return false;
  auto it = cast->attributes.find("to");
  return it != cast->attributes.end() && it->second.i() == onnx::TensorProto::FLOAT;
}

// The constant [N] bias of an Add reading `value` as its only reader, or "".
std::string ConstantBiasAfter(const Graph& graph, const std::string& value, int64_t n, Node** add) {
  *add = SoleConsumer(graph, value);
  if (!IsNumpyOp(*add, "Add") || (*add)->inputs.size() != 2) return "";
  const std::string& other = OtherInput(**add, value);
  const Tensor* t = ConstantValue(graph, other);
  if (t == nullptr || t->type() != DataType::kFloat || t->rank() != 1 || t->num_elements() != n) return "";
  return other;
}

// ONNX Runtime's own forms, DynamicQuantizeMatMul and MatMulIntegerToFloat
// (com.microsoft) without a bias, followed by the Add of a constant bias: the
// com.onyx form with the bias inside.
bool FuseBiasIntoQuantizedProduct(Graph& graph, Node* product) {
  if (product == nullptr || product->domain != kMicrosoftDomain || product->outputs.size() != 1) return false;
  const bool dynamic = product->op_type == "DynamicQuantizeMatMul";
  if (!dynamic && product->op_type != "MatMulIntegerToFloat") return false;
  const size_t bias_input = dynamic ? 4 : 6;
  if (product->inputs.size() > bias_input && !product->inputs[bias_input].empty()) return false;
  if (product->inputs.size() < 2) return false;
  const Tensor* b = ConstantValue(graph, product->inputs[1]);
  if (b == nullptr || b->rank() != 2) return false;
  Node* add = nullptr;
  const std::string bias = ConstantBiasAfter(graph, product->outputs[0], b->dims()[1], &add);
  if (bias.empty()) return false;
  auto fused = std::make_unique<Node>();
  fused->name = product->name.empty() ? graph.UniqueValueName(product->op_type) : product->name + "_bias";
  fused->op_type = dynamic ? "FusedDynamicQuantizeMatMul" : "FusedMatMulIntegerToFloat";
  fused->domain = kOnyxDomain;
  fused->inputs = product->inputs;
  fused->inputs.resize(bias_input);
  fused->inputs.push_back(bias);
  fused->outputs = {add->outputs[0]};
  graph.RemoveNode(add->index);
  graph.RemoveNode(product->index);
  graph.AddNode(std::move(fused));
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseMatMulIntegerToFloat::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) changed |= FuseBiasIntoQuantizedProduct(graph, graph.node(i));
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* mmi = graph.node(i);
    if (!IsOp(mmi, "MatMulInteger") || mmi->inputs.size() < 2 || mmi->outputs.size() != 1) continue;
    const Tensor* b = ConstantValue(graph, mmi->inputs[1]);
    if (b == nullptr || b->rank() != 2) continue;
    const int64_t n = b->dims()[1];
    const std::string a_zp = mmi->inputs.size() > 2 ? mmi->inputs[2] : "";
    const std::string b_zp = mmi->inputs.size() > 3 ? mmi->inputs[3] : "";
    if (!a_zp.empty() && !PerTensor(graph, a_zp)) continue;
    if (!b_zp.empty() && !PerTensorOrColumn(graph, b_zp, n)) continue;

    Node* cast = SoleConsumer(graph, mmi->outputs[0]);
    if (!CastsToFloat(cast)) continue;
    Node* mul = SoleConsumer(graph, cast->outputs[0]);
    if (!IsNumpyOp(mul, "Mul") || mul->inputs.size() != 2 || mul->inputs[0] == mul->inputs[1]) continue;
    // The multiplier is a_scale * b_scale: a per-tensor a_scale (computed at
    // run time, DynamicQuantizeLinear's) and a constant b_scale.
    Node* scales = graph.Producer(OtherInput(*mul, cast->outputs[0]));
    if (!IsNumpyOp(scales, "Mul") || scales->inputs.size() != 2) continue;
    std::string a_scale = scales->inputs[0], b_scale = scales->inputs[1];
    if (ConstantValue(graph, b_scale) == nullptr) std::swap(a_scale, b_scale);
    if (ConstantValue(graph, b_scale) == nullptr || !PerTensor(graph, a_scale) ||
        !PerTensorOrColumn(graph, b_scale, n) || KnownType(graph, a_scale) != DataType::kFloat ||
        KnownType(graph, b_scale) != DataType::kFloat) {
      continue;
    }
    // An Add of a constant [N] bias joins when it is the product's only reader.
    Node* add = nullptr;
    const std::string bias = ConstantBiasAfter(graph, mul->outputs[0], n, &add);

    auto fused = std::make_unique<Node>();
    fused->name = mmi->name.empty() ? graph.UniqueValueName("FusedMatMulIntegerToFloat") : mmi->name + "_to_float";
    fused->op_type = "FusedMatMulIntegerToFloat";
    fused->domain = kOnyxDomain;
    fused->inputs = {mmi->inputs[0], mmi->inputs[1], a_scale, b_scale, a_zp, b_zp};
    if (!bias.empty()) fused->inputs.push_back(bias);
    while (fused->inputs.back().empty()) fused->inputs.pop_back();
    fused->outputs = {bias.empty() ? mul->outputs[0] : add->outputs[0]};
    if (!bias.empty()) graph.RemoveNode(add->index);
    graph.RemoveNode(mul->index);
    graph.RemoveNode(cast->index);
    graph.RemoveNode(mmi->index);
    if (graph.Consumers(scales->outputs[0]).empty() && !graph.IsOutput(scales->outputs[0])) {
      graph.RemoveNode(scales->index);
    }
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
