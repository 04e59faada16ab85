// Removes Transpose(perm2)(Transpose(perm1)(x)) when perm2 undoes perm1 and the
// first Transpose has no other reader: both nodes go, readers see x.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class EliminateTransposePair final : public GraphTransformer {
 public:
  const char* name() const override { return "EliminateTransposePair"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
