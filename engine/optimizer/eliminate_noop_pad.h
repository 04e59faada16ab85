// Removes Pad nodes whose pads are all zero (the attribute before opset 11,
// a constant input from it on): an identity in every mode. PyTorch writes
// one before each AveragePool of DenseNet's transitions; left in place it
// runs as a copy and keeps the pooling out of the channels-last layout.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class EliminateNoopPad final : public GraphTransformer {
 public:
  const char* name() const override { return "EliminateNoopPad"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
