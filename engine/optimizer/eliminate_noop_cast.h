// Removes Cast and CastLike nodes whose target type equals the input's type.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class EliminateNoopCast final : public GraphTransformer {
 public:
  const char* name() const override { return "EliminateNoopCast"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
