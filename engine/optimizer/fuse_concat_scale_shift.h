// A channels-last Concat whose only reader is a per-channel scale and shift
// (a BatchNormalization that NhwcLayout turned into a depthwise 1x1 NhwcConv,
// optionally with its Relu) becomes one com.onyx ConcatScaleShift: the
// normalised concatenation written in one pass instead of a copy and a second
// pass over the copy. DenseNet's dense layers and transitions are this
// pattern, on the largest tensors of the network. Runs after NhwcLayout.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseConcatScaleShift final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseConcatScaleShift"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
