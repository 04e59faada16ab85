// DequantizeLinear -> Conv -> QuantizeLinear (a statically quantized model in
// QDQ form, as ONNX Runtime's quantize_static writes it) -> QLinearConv, which
// accumulates in int32 and requantizes once, as ONNX Runtime does once it has
// fused the same group: faster than dequantizing to run a float convolution,
// and equal to ONNX Runtime's output.
//
// Fused when: x and the output have constant scalar scales and zero points;
// the weights are a constant int8 tensor with zero point 0 or uint8 with 128
// (what oneDNN's int8 convolution takes), per tensor or per output channel
// (DequantizeLinear axis 0); the bias, if any, is an int32 constant behind a
// DequantizeLinear whose scale is x_scale * w_scale; the Conv's only reader is
// the QuantizeLinear, or a Relu whose only reader is a QuantizeLinear with the
// type's minimum as zero point (the Relu is then the quantization's own
// clamp). Runs before constant folding, which would turn the weights'
// DequantizeLinear into float weights.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseQdqConv final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseQdqConv"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
