// MatMul(A, B) + bias -> com.onyx FusedMatMul(A, B, bias) when B is a constant
// 2-D matrix [K, N] and bias a constant of N elements: one GEMM over all of A's
// leading dims with the bias added per row (the Linear layers of MLPs and
// transformers).
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseMatMulAdd final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseMatMulAdd"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
