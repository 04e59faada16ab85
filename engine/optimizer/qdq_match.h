// Matchers shared by the QDQ fusions (fuse_qdq_conv, fuse_qdq_matmul): what a
// DequantizeLinear / QuantizeLinear must look like for its group to run as
// one int8 operator that oneDNN takes.
#pragma once

#include <string>

#include "graph/graph.h"

namespace onyx {

// A QuantizeLinear or DequantizeLinear with constant scalar float scale and
// 8-bit zero point (both present), not blocked.
bool HasPerTensorQuantParams(const Graph& graph, const Node& node);

// A DequantizeLinear of constant int8 weights with zero point 0 (or none) or
// uint8 weights with zero point 128, per tensor or with one scale per index
// of `axis` (`channels` of them).
bool DequantizesWeightsOneDnnTakes(const Graph& graph, const Node* dq, int64_t axis, int64_t channels);

// True when a QuantizeLinear's zero point is its type's minimum, so that the
// quantization itself clamps at the real 0 (a Relu before it is redundant).
bool ZeroPointIsTypeMinimum(const Tensor& zero_point);

// The weights' zero point for a fused operator that requires one: the
// DequantizeLinear's own, or a new int8 zero initializer shaped like the scale.
std::string WeightsZeroPoint(Graph& graph, const Node& dq);

}  // namespace onyx
