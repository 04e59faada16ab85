// Constant folding: a node whose inputs are all constants is evaluated once with
// the CPU kernels and replaced by initializers. Shape and Size of values whose
// shape is fully known fold too, which collapses the exporters'
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape residue when shapes are static.
// Random ops, control flow and nodes whose outputs would exceed a size cap are
// left alone.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class ConstantFolding final : public GraphTransformer {
 public:
  const char* name() const override { return "ConstantFolding"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
