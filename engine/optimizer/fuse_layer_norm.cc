#include "optimizer/fuse_layer_norm.h"

#include "graph/op_domains.h"
#include "optimizer/fuse_gelu.h"

namespace onyx {
namespace {

// ReduceMean over exactly the last axis of its input, keeping dims.
bool IsLastAxisMean(const Graph& graph, const Node* n) {
  if (!IsOp(n, "ReduceMean")) return false;
  const auto* axes = n->FindAttribute("axes");
  const auto* keep = n->FindAttribute("keepdims");
  if (axes == nullptr || axes->ints_size() != 1 || (keep != nullptr && keep->i() == 0)) return false;
  int64_t axis = axes->ints(0);
  if (axis == -1) return true;
  const ValueInfo* in = graph.FindValueInfo(n->inputs[0]);
  return in != nullptr && in->has_shape && axis == static_cast<int64_t>(in->dims.size()) - 1;
}

}  // namespace

absl::StatusOr<bool> FuseLayerNorm::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* sub = graph.node(i);
    if (sub == nullptr || !IsNumpyOp(sub, "Sub")) continue;
    const std::string x = sub->inputs[0];
    Node* mean = graph.Producer(sub->inputs[1]);
    if (!IsLastAxisMean(graph, mean) || mean->inputs[0] != x || SoleConsumer(graph, mean->outputs[0]) != sub) continue;
    const std::string d = sub->outputs[0];
    std::vector<Node*> readers = graph.Consumers(d);
    if (readers.size() != 2 || graph.IsOutput(d)) continue;
    Node* pow = IsOp(readers[0], "Pow") ? readers[0] : readers[1];
    Node* div = pow == readers[0] ? readers[1] : readers[0];
    if (!IsOp(pow, "Pow") || !IsNumpyOp(div, "Div") || pow->inputs[0] != d || div->inputs[0] != d) continue;
    if (!IsScalarConstant(graph, pow->inputs[1], 2.f)) continue;
    Node* var = SoleConsumer(graph, pow->outputs[0]);
    if (!IsLastAxisMean(graph, var)) continue;
    Node* add_eps = SoleConsumer(graph, var->outputs[0]);
    if (!IsNumpyOp(add_eps, "Add")) continue;
    const std::string eps_name = add_eps->inputs[0] == var->outputs[0] ? add_eps->inputs[1] : add_eps->inputs[0];
    const Tensor* eps = ConstantValue(graph, eps_name);
    if (eps == nullptr || eps->num_elements() != 1 || eps->type() != DataType::kFloat) continue;
    Node* sqrt = SoleConsumer(graph, add_eps->outputs[0]);
    if (!IsOp(sqrt, "Sqrt") || SoleConsumer(graph, sqrt->outputs[0]) != div || div->inputs[1] != sqrt->outputs[0]) {
      continue;
    }
    Node* scale = SoleConsumer(graph, div->outputs[0]);
    if (!IsNumpyOp(scale, "Mul")) continue;
    const std::string gamma = scale->inputs[0] == div->outputs[0] ? scale->inputs[1] : scale->inputs[0];
    Node* shift = SoleConsumer(graph, scale->outputs[0]);
    if (!IsNumpyOp(shift, "Add")) continue;
    const std::string beta = shift->inputs[0] == scale->outputs[0] ? shift->inputs[1] : shift->inputs[0];
    const Tensor* g = ConstantValue(graph, gamma);
    const Tensor* b = ConstantValue(graph, beta);
    // gamma and beta hold one value per element of the normalised (last)
    // axis. When x's shape is unknown (hidden by an exporter's dynamic
    // Reshape) the kernel checks that length at run time instead.
    const ValueInfo* xi = graph.FindValueInfo(x);
    if (g == nullptr || b == nullptr || g->rank() != 1 || b->rank() != 1 || g->num_elements() != b->num_elements()) {
      continue;
    }
    const bool x_known = xi != nullptr && xi->has_shape && !xi->dims.empty() && xi->dims.back() > 0;
    if (x_known && g->num_elements() != xi->dims.back()) continue;
    auto ln = std::make_unique<Node>();
    ln->name = graph.UniqueValueName("LayerNorm");
    ln->op_type = "LayerNormalization";
    ln->domain = kOnyxDomain;
    ln->inputs = {x, gamma, beta};
    ln->outputs = {shift->outputs[0]};
    onnx::AttributeProto axis, epsilon;
    axis.set_name("axis");
    axis.set_type(onnx::AttributeProto::INT);
    axis.set_i(-1);
    epsilon.set_name("epsilon");
    epsilon.set_type(onnx::AttributeProto::FLOAT);
    epsilon.set_f(*eps->data<float>());
    ln->attributes["axis"] = axis;
    ln->attributes["epsilon"] = epsilon;
    for (Node* n : {mean, sub, pow, var, add_eps, sqrt, div, scale, shift}) graph.RemoveNode(n->index);
    graph.AddNode(std::move(ln));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
