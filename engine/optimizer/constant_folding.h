// Constant folding: a node whose inputs are all constants is evaluated once with
// the CPU kernels and replaced by initializers. Shape and Size of values whose
// shape is fully known fold too, which collapses the exporters'
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape residue when shapes are
// static; with a ShapeRefiner, shapes are re-inferred after each fold (the
// Reshape's output becomes static once its shape input is constant) and
// folding repeats down the network while that makes more shapes static.
// Random ops, control flow and nodes whose outputs would exceed a size cap are
// left alone.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "optimizer/graph_transformer.h"

namespace onyx {

class ConstantFolding final : public GraphTransformer {
 public:
  // `evaluate` runs one node over its constant inputs (the session binds it to
  // the CPU kernels, see exec/node_evaluator.h); an empty result leaves the
  // node in place.
  explicit ConstantFolding(NodeEvaluator evaluate, ShapeRefiner refine = nullptr)
      : evaluate_(std::move(evaluate)), refine_(std::move(refine)) {}
  const char* name() const override { return "ConstantFolding"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
  bool FoldOnce(Graph& graph) const;

  NodeEvaluator evaluate_;
  ShapeRefiner refine_;
};

}  // namespace onyx
