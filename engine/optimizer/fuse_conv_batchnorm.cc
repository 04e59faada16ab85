#include "optimizer/fuse_conv_batchnorm.h"

#include <cmath>

namespace onyx {

absl::StatusOr<bool> FuseConvBatchNorm::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* conv = graph.node(i);
    if (conv == nullptr || !IsOp(conv, "Conv") || conv->inputs.size() < 2) continue;
    Node* bn = SoleConsumer(graph, conv->outputs[0]);
    if (!IsOp(bn, "BatchNormalization") || bn->inputs.size() < 5 || bn->inputs[0] != conv->outputs[0]) continue;
    if (bn->outputs.size() > 1) {
      bool extra_used = false;
      for (size_t i = 1; i < bn->outputs.size(); ++i) extra_used |= !bn->outputs[i].empty();
      if (extra_used) continue;  // training-mode outputs requested
    }
    if (const auto* training = bn->FindAttribute("training_mode"); training && training->i() != 0) continue;
    const Tensor* w = ConstantValue(graph, conv->inputs[1]);
    const Tensor* b =
        conv->inputs.size() > 2 && !conv->inputs[2].empty() ? ConstantValue(graph, conv->inputs[2]) : nullptr;
    if (conv->inputs.size() > 2 && !conv->inputs[2].empty() && b == nullptr) continue;
    const Tensor* gamma = ConstantValue(graph, bn->inputs[1]);
    const Tensor* beta = ConstantValue(graph, bn->inputs[2]);
    const Tensor* mean = ConstantValue(graph, bn->inputs[3]);
    const Tensor* var = ConstantValue(graph, bn->inputs[4]);
    if (!w || !gamma || !beta || !mean || !var || w->type() != DataType::kFloat || w->rank() < 3) continue;
    const int64_t out_c = w->dims()[0];
    bool shapes_ok = gamma->num_elements() == out_c && beta->num_elements() == out_c && mean->num_elements() == out_c &&
                     var->num_elements() == out_c && (b == nullptr || b->num_elements() == out_c);
    for (const Tensor* t : {gamma, beta, mean, var}) shapes_ok &= t->type() == DataType::kFloat;
    if (!shapes_ok) continue;
    const float eps = bn->FindAttribute("epsilon") ? bn->FindAttribute("epsilon")->f() : 1e-5f;
    Tensor new_w = w->Clone();
    Tensor new_b = Tensor::Allocate(DataType::kFloat, {out_c});
    const int64_t per_channel = w->num_elements() / out_c;
    for (int64_t c = 0; c < out_c; ++c) {
      const float s = gamma->data<float>()[c] / std::sqrt(var->data<float>()[c] + eps);
      float* wc = new_w.mutable_data<float>() + c * per_channel;
      for (int64_t i = 0; i < per_channel; ++i) wc[i] *= s;
      const float bias = b ? b->data<float>()[c] : 0.f;
      new_b.mutable_data<float>()[c] = (bias - mean->data<float>()[c]) * s + beta->data<float>()[c];
    }
    std::string w_name = graph.UniqueValueName(conv->inputs[1] + "_bn");
    std::string b_name = graph.UniqueValueName(conv->name + "_bn_bias");
    graph.SetInitializer(w_name, std::move(new_w));
    graph.SetInitializer(b_name, std::move(new_b));
    conv->inputs.resize(3);
    conv->inputs[1] = w_name;
    conv->inputs[2] = b_name;
    conv->outputs[0] = bn->outputs[0];
    graph.RemoveNode(bn->index);
    changed = true;
  }
  return changed;
}

}  // namespace onyx
