// DequantizeLinear -> MatMul -> QuantizeLinear (QDQ form, as ONNX Runtime's
// quantize_static writes a quantized MatMul) -> QLinearMatMul, which runs
// oneDNN's int8 matmul and requantizes once, as ONNX Runtime runs the same
// group. Fused when: A and the output have constant scalar scales and zero
// points; B is a constant 2-D int8 tensor with zero point 0 or uint8 with 128,
// per tensor or per column (DequantizeLinear axis 1); the MatMul's only reader
// is the QuantizeLinear. Runs before constant folding (see fuse_qdq_conv.h).
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseQdqMatMul final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseQdqMatMul"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
