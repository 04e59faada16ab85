// Add(X, M) -> Softmax over the last axis, where the Add's only reader is the
// Softmax and M broadcasts to X's shape (an attention block's mask on its
// scores), becomes com.onyx MaskedSoftmax(X, M): one pass over the scores
// instead of two (providers/cpu/fused). Shapes must be known well enough to
// prove the broadcast: equal dims, dims of 1 in M, or the same named dim.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseMaskedSoftmax final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseMaskedSoftmax"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
