#include "optimizer/fuse_masked_softmax.h"

#include "graph/op_domains.h"

namespace onyx {
namespace {

const ValueInfo* FloatShape(const Graph& graph, const std::string& value) {
  const ValueInfo* info = graph.FindValueInfo(value);
  if (info == nullptr || info->kind != ValueInfo::Kind::kTensor || info->type != DataType::kFloat || !info->has_shape) {
    return nullptr;
  }
  return info;
}

// True when dim i of `x` is provably dim j of `y`: both static and equal, or
// both symbolic with the same name.
bool SameDim(const ValueInfo& x, size_t i, const ValueInfo& y, size_t j) {
  if (x.dims[i] >= 0 || y.dims[j] >= 0) return x.dims[i] == y.dims[j];
  const std::string xp = i < x.dim_params.size() ? x.dim_params[i] : "";
  const std::string yp = j < y.dim_params.size() ? y.dim_params[j] : "";
  return !xp.empty() && xp == yp;
}

// True when `m` provably broadcasts to `x`'s shape and `x` is the sum's shape.
bool BroadcastsInto(const ValueInfo& m, const ValueInfo& x, const ValueInfo& sum) {
  if (m.dims.size() > x.dims.size() || x.dims.size() != sum.dims.size() || x.dims.empty()) return false;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (!SameDim(x, i, sum, i)) return false;
  }
  const size_t shift = x.dims.size() - m.dims.size();
  for (size_t j = 0; j < m.dims.size(); ++j) {
    if (m.dims[j] != 1 && !SameDim(m, j, x, j + shift)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseMaskedSoftmax::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* softmax = graph.node(i);
    if (softmax == nullptr || !IsOp(softmax, "Softmax")) continue;
    Node* add = graph.Producer(softmax->inputs[0]);
    if (!IsNumpyOp(add, "Add") || SoleConsumer(graph, add->outputs[0]) != softmax) continue;
    const ValueInfo* sum = FloatShape(graph, add->outputs[0]);
    if (sum == nullptr || sum->dims.empty()) continue;
    const int64_t rank = static_cast<int64_t>(sum->dims.size());
    // Opset 13 normalises along `axis` (-1 by default); earlier opsets the
    // rows from `axis` (1 by default) on: the same rows when axis is the last.
    int64_t axis = softmax->since_version >= 13 ? -1 : 1;
    if (const auto* attr = softmax->FindAttribute("axis")) axis = attr->i();
    if (axis < 0) axis += rank;
    if (axis != rank - 1) continue;
    const ValueInfo* a = FloatShape(graph, add->inputs[0]);
    const ValueInfo* b = FloatShape(graph, add->inputs[1]);
    if (a == nullptr || b == nullptr) continue;
    std::string scores, mask;
    if (BroadcastsInto(*b, *a, *sum)) {
      scores = add->inputs[0];
      mask = add->inputs[1];
    } else if (BroadcastsInto(*a, *b, *sum)) {
      scores = add->inputs[1];
      mask = add->inputs[0];
    } else {
      continue;
    }
    auto fused = std::make_unique<Node>();
    fused->name = softmax->name.empty() ? graph.UniqueValueName("MaskedSoftmax") : softmax->name;
    fused->op_type = "MaskedSoftmax";
    fused->domain = kOnyxDomain;
    fused->inputs = {scores, mask};
    fused->outputs = {softmax->outputs[0]};
    graph.RemoveNode(softmax->index);
    graph.RemoveNode(add->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
