// Folds an inference BatchNormalization into the Conv feeding it:
//   W' = W * s,  B' = (B - mean) * s + beta,  s = gamma / sqrt(var + epsilon)
// per output channel. Needs constant W, B (optional) and BN parameters, and a
// Conv output read only by the BatchNormalization.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseConvBatchNorm final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseConvBatchNorm"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
