// Gemm + Relu -> com.onyx FusedGemm, and FusedMatMul or a quantized product
// (com.onyx FusedMatMulIntegerToFloat / FusedDynamicQuantizeMatMul, or
// com.microsoft MatMulIntegerToFloat / DynamicQuantizeMatMul, which become the
// com.onyx ops) + Relu or com.onyx Gelu -> the same with `activation` =
// "Relu" or "Gelu": the activation is
// applied to the product while it is still hot in cache, and its separate
// output buffer and pass over memory disappear (the hidden layers of MLPs and
// transformer blocks). Only float outputs whose sole consumer is the
// activation are fused.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseGemmActivation final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseGemmActivation"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
