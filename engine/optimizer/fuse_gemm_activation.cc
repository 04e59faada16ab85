#include "optimizer/fuse_gemm_activation.h"

#include "graph/op_domains.h"

namespace onyx {
namespace {

// Gelu-20 with approximate = none (its default).
bool IsErfGelu(const Node& n) {
  auto it = n.attributes.find("approximate");
  return it == n.attributes.end() || it->second.s() == "none";
}

}  // namespace

absl::StatusOr<bool> FuseGemmActivation::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* product = graph.node(i);
    const bool gemm = IsOp(product, "Gemm");
    // The quantized products: com.onyx's, and ONNX Runtime's forms, which
    // become com.onyx's to carry the activation.
    const bool quantized =
        product != nullptr && !product->attributes.count("activation") &&
        ((product->domain == kOnyxDomain &&
          (product->op_type == "FusedMatMulIntegerToFloat" || product->op_type == "FusedDynamicQuantizeMatMul")) ||
         (product->domain == kMicrosoftDomain &&
          (product->op_type == "MatMulIntegerToFloat" || product->op_type == "DynamicQuantizeMatMul")));
    const bool fused_matmul =
        quantized || (product != nullptr && product->domain == kOnyxDomain && product->op_type == "FusedMatMul" &&
                      !product->attributes.count("activation"));
    if (!gemm && !fused_matmul) continue;
    const ValueInfo* out = graph.FindValueInfo(product->outputs[0]);
    if (out == nullptr || out->type != DataType::kFloat) continue;
    Node* relu = SoleConsumer(graph, product->outputs[0]);
    // FusedMatMul and FusedMatMulIntegerToFloat also take the GELU that
    // FuseGelu writes and Gelu-20's erf form (oneDNN runs it as a post-op);
    // FusedGemm takes Relu only.
    const bool gelu = fused_matmul && relu != nullptr && relu->op_type == "Gelu" &&
                      (relu->domain == kOnyxDomain || (relu->domain.empty() && IsErfGelu(*relu)));
    if (!IsOp(relu, "Relu") && !gelu) continue;
    auto fused = std::make_unique<Node>();
    if (gemm) {
      fused->name = product->name.empty() ? graph.UniqueValueName("FusedGemm") : product->name + "_fused";
      fused->op_type = "FusedGemm";
    } else {
      fused->name = product->name;
      fused->op_type = product->op_type;
      if (product->domain == kMicrosoftDomain) fused->op_type = "Fused" + product->op_type;
    }
    fused->domain = kOnyxDomain;
    fused->inputs = product->inputs;
    fused->attributes = product->attributes;
    fused->outputs = {relu->outputs[0]};
    if (gelu) {
      SetActivation(*fused, "Gelu", {});
    } else {
      SetReluActivation(*fused);
    }
    graph.RemoveNode(relu->index);
    graph.RemoveNode(product->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
