// The erf form of GELU as exporters write it,
//   0.5 * x * (1 + Erf(x / sqrt(2)))   (Div by 1.41421 or Mul by 0.70711),
// becomes one com.onyx Gelu node.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseGelu final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseGelu"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

// True when `value` is a constant scalar (any rank, one element) within 1e-4 of `expected`.
bool IsScalarConstant(const Graph& graph, const std::string& value, float expected);

}  // namespace onyx
