// Transposes around a float MatMul of two computed operands, and a constant
// scalar Mul or Div of its product, folded into one com.onyx
// TransposedMatMul (perm_a, perm_b, perm_y, alpha) that reads its operands and
// writes its result through permuted strides (providers/cpu/fused): a
// Hugging Face attention block's head split ([b, s, h, d] -> [b, h, s, d]),
// key transpose, 1/sqrt(d) scale and head merge cost no pass of their own.
// A Transpose (or a chain of them) folds when the MatMul is its output's only
// reader and the permuted operand keeps a contiguous row or column (its last
// axis ends up in one of the last two places); the result's Transpose when
// it keeps the last axis last. MatMuls with a constant operand (weights,
// packed by their own kernels) are left alone.
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseTransposeMatMul final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseTransposeMatMul"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
