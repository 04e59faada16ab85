#include "optimizer/fuse_concat_scale_shift.h"

#include "graph/op_domains.h"

namespace onyx {
namespace {

// True when the ints attribute is absent or every value is `value`.
bool AllInts(const Node& n, const char* name, int64_t value) {
  const auto* attr = n.FindAttribute(name);
  if (attr == nullptr) return true;
  for (int64_t v : attr->ints()) {
    if (v != value) return false;
  }
  return true;
}

// The channel count when `n` is a depthwise 1x1 NhwcConv with stride 1, no
// padding, constant float W [C, 1, 1, 1] and bias [C], and no activation but
// Relu: y[..., c] = act(x[..., c] * W[c] + B[c]). 0 otherwise.
int64_t PerChannelScaleShift(const Graph& graph, const Node& n) {
  if (n.domain != kOnyxDomain || n.op_type != "NhwcConv" || n.inputs.size() != 3 || n.inputs[2].empty()) return 0;
  const Tensor* w = ConstantValue(graph, n.inputs[1]);
  const Tensor* b = ConstantValue(graph, n.inputs[2]);
  if (w == nullptr || b == nullptr || w->type() != DataType::kFloat || b->type() != DataType::kFloat) return 0;
  const int64_t channels = b->num_elements();
  if (w->dims() != Dims{channels, 1, 1, 1}) return 0;
  const auto* group = n.FindAttribute("group");
  if (group == nullptr || group->i() != channels) return 0;
  if (!AllInts(n, "kernel_shape", 1) || !AllInts(n, "strides", 1) || !AllInts(n, "pads", 0) ||
      !AllInts(n, "dilations", 1)) {
    return 0;
  }
  if (const auto* pad = n.FindAttribute("auto_pad"); pad != nullptr && pad->s() != "NOTSET" && pad->s() != "VALID") {
    return 0;
  }
  if (n.FindAttribute("activation_params") != nullptr) return 0;
  if (const auto* act = n.FindAttribute("activation"); act != nullptr && act->s() != "Relu") return 0;
  return channels;
}

bool IsFloat(const Graph& graph, const std::string& value, size_t rank) {
  const ValueInfo* info = graph.FindValueInfo(value);
  return info != nullptr && info->kind == ValueInfo::Kind::kTensor && info->type == DataType::kFloat &&
         info->has_shape && info->dims.size() == rank;
}

}  // namespace

absl::StatusOr<bool> FuseConcatScaleShift::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* affine = graph.node(i);
    if (affine == nullptr) continue;
    const int64_t channels = PerChannelScaleShift(graph, *affine);
    if (channels == 0) continue;
    Node* concat = graph.Producer(affine->inputs[0]);
    if (!IsOp(concat, "Concat") || SoleConsumer(graph, concat->outputs[0]) != affine) continue;
    const ValueInfo* out = graph.FindValueInfo(concat->outputs[0]);
    if (out == nullptr || !IsFloat(graph, concat->outputs[0], out->dims.size()) || out->dims.empty()) continue;
    const size_t rank = out->dims.size();
    const auto* axis = concat->FindAttribute("axis");
    if (axis == nullptr || (axis->i() != static_cast<int64_t>(rank) - 1 && axis->i() != -1)) continue;
    if (out->dims.back() >= 0 && out->dims.back() != channels) continue;
    bool inputs_ok = !concat->inputs.empty();
    for (const std::string& in : concat->inputs) inputs_ok = inputs_ok && !in.empty() && IsFloat(graph, in, rank);
    if (!inputs_ok) continue;

    auto fused = std::make_unique<Node>();
    fused->name = affine->name.empty() ? graph.UniqueValueName("ConcatScaleShift") : affine->name;
    fused->op_type = "ConcatScaleShift";
    fused->domain = kOnyxDomain;
    fused->inputs = {affine->inputs[1], affine->inputs[2]};
    fused->inputs.insert(fused->inputs.end(), concat->inputs.begin(), concat->inputs.end());
    fused->outputs = {affine->outputs[0]};
    if (const auto* act = affine->FindAttribute("activation")) fused->attributes["activation"] = *act;
    graph.RemoveNode(affine->index);
    graph.RemoveNode(concat->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
