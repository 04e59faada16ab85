// Removes Identity nodes, wiring their consumers to the Identity's input.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class EliminateIdentity final : public GraphTransformer {
 public:
  const char* name() const override { return "EliminateIdentity"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
