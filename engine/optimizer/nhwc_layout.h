// Channels-last layout for the CPU: rewrites the main graph so that 2-D
// convolutions, the pooling, element-wise, Concat, Resize and BatchNorm nodes
// between them run on [N, H, W, C] activations, converting only where a node
// needs [N, C, H, W] (the graph's inputs and outputs, Flatten, Gemm, ...).
// oneDNN's convolutions run NHWC natively, so a network's chain of
// convolutions stops paying a reorder in and out of every one.
//
//   Conv/FusedConv            -> com.onyx NhwcConv (constant float 4-D W; FusedConv
//                                of com.onyx or com.microsoft), or NchwToNhwcConv
//                                for an image network's first layer (X not yet
//                                channels-last, <= 4 channels, <= 256 taps, no
//                                group, dilation or residual): no Transpose in
//                                front of it
//   ConvTranspose             -> com.onyx NhwcConvTranspose (the same; explicit
//                                pads, no output_padding or output_shape)
//   MaxPool/AveragePool       -> com.onyx NhwcMaxPool/NhwcAveragePool
//   GlobalAverage/MaxPool     -> com.onyx NhwcGlobalAveragePool/NhwcGlobalMaxPool
//   BatchNormalization        -> NhwcConv, depthwise 1x1 (constant statistics)
//   element-wise, Concat and Split (axis 1), Slice (constant axes),
//   Resize (constant scales or sizes)
//                             -> the same node on NHWC operands
//
// Convolutions are always converted; the other nodes only when an input is
// already channels-last. A Transpose(perm 0,2,3,1) enters the layout and a
// Transpose(perm 0,3,1,2) leaves it; a model's own transposes between the two
// layouts (ConvNeXt writes them) are absorbed. An activation right after a
// converted BatchNorm becomes its post-op. Only the main graph is rewritten;
// every new value gets its type and shape. Run once, after the fusions,
// when the CPU provider executes the whole graph (the new operators are its).
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class NhwcLayout final : public GraphTransformer {
 public:
  const char* name() const override { return "NhwcLayout"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
