// Conv (+ Add of a same-shaped residual) (+ an activation) -> com.onyx
// FusedConv, which applies the addition and the activation while the Conv
// output is still hot in cache (oneDNN runs them as post-ops). Activations:
// Relu, LeakyRelu, Clip with constant bounds (ReLU6), Sigmoid, HardSigmoid,
// HardSwish, and x * Sigmoid(x) (SiLU, "Swish"). A Conv with neither an Add nor an
// activation is left alone. Attributes of the Conv are kept; `activation`
// names the activation and `activation_params` holds its parameters (see
// engine/optimizer/README.md); the residual, when present, is the fourth
// input (Z).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optimizer/graph_transformer.h"

namespace onyx {

// A single-node activation as a fused node's `activation` attribute names it.
struct MatchedActivation {
  std::string name;
  std::vector<float> params;
};

// The activation `next` computes, when it is a Relu, LeakyRelu, Sigmoid,
// HardSigmoid, HardSwish or Clip with constant bounds; nullopt otherwise.
std::optional<MatchedActivation> MatchSingleNodeActivation(const Graph& graph, const Node* next);

class FuseConvActivation final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseConvActivation"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
