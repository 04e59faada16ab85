// The decomposed layer normalization exporters emit for opsets before 17,
//   m = ReduceMean(x); d = x - m; v = ReduceMean(d^2); y = d / Sqrt(v + eps) * g + b,
// over the last axis, becomes one com.onyx LayerNormalization(x, g, b) with
// `axis` = -1 and `epsilon`.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseLayerNorm final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseLayerNorm"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
