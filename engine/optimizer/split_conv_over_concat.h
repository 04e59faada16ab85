// A channels-last Concat read only by a convolution or a pool is never
// written: the reader is split over the Concat's inputs instead.
//   - NhwcMaxPool / NhwcAveragePool (Concat) -> Concat (pool of each input):
//     pooling is per channel, and the Concat moves a quarter of the data.
//   - NhwcConv (Concat) -> a chain of NhwcConvs, one per input, each over its
//     slice of W's input channels and adding the previous partial sum as its
//     residual: conv(concat(a, b), [Wa Wb]) = conv(a, Wa) + conv(b, Wb). The
//     bias goes to the first, the activation to the last. Taken only when the
//     partial sums (M channels, read and written once per extra input) move
//     less than the Concat would (its C channels, written and read again).
// SqueezeNet's fire modules (and Inception-style blocks) are this pattern: a
// convolution or pool reading the concatenation of two expand convolutions.
// Runs after NhwcLayout and FuseConcatScaleShift.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class SplitConvOverConcat final : public GraphTransformer {
 public:
  const char* name() const override { return "SplitConvOverConcat"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
