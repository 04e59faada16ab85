// Conv (+ Add of a same-shaped residual) + Relu -> com.onyx FusedConv, which
// applies the addition and the activation while the Conv output is still hot
// in cache. Attributes of the Conv are kept; `activation` = "Relu"; the
// residual, when present, is the fourth input (Z).
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseConvActivation final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseConvActivation"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
