// Shape-op chains that collapse:
//  - Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when s2 is a constant without
//    0 entries (which would copy dims of the intermediate);
//  - Unsqueeze(Squeeze(x, a), a) and Squeeze(Unsqueeze(x, a), a) -> x, with the
//    same constant axes (attribute or input form).
// The inner node must have no other reader.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FoldReshapeChain final : public GraphTransformer {
 public:
  const char* name() const override { return "FoldReshapeChain"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
