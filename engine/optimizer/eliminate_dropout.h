// Removes inference-mode Dropout (no training_mode input, or a constant false
// one) whose mask output is unused: at inference Dropout is the identity.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class EliminateDropout final : public GraphTransformer {
 public:
  const char* name() const override { return "EliminateDropout"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
