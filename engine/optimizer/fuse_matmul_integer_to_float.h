// MatMulInteger -> Cast(to float) -> Mul(a_scale * b_scale) (-> Add(bias)) ->
// com.onyx FusedMatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp, b_zp,
// bias): the form ONNX Runtime's dynamic quantizer writes for every weight
// MatMul. The int32 product, its float copy and the scaled copy are never
// written; the scale and bias are applied inside the int8 product
// (providers/cpu/contrib/quant_matmul.cc). B must be a constant matrix [K, N],
// a_scale and a_zp per tensor, b_scale and b_zp per tensor or per column,
// the bias a constant [N]. ONNX Runtime's own forms, com.microsoft
// DynamicQuantizeMatMul and MatMulIntegerToFloat, take a following constant
// bias Add the same way (becoming com.onyx FusedDynamicQuantizeMatMul and
// FusedMatMulIntegerToFloat).
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseMatMulIntegerToFloat final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseMatMulIntegerToFloat"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
