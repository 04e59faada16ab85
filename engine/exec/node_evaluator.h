// Runs one node, once, outside any session: the evaluator constant folding
// uses at session creation (optimizer/constant_folding.h takes it as a
// NodeEvaluator, so the optimizer never depends on the executor).
// Thread-safe: each call builds its own one-node plan and frame.
#pragma once

#include <vector>

#include "framework/execution_provider.h"
#include "graph/graph.h"
#include "onyx/tensor.h"

namespace onyx {

// Evaluates `node`, whose inputs are all initializers of `graph`, with the
// kernel `provider` registers for it, on the calling thread alone. Returns
// the outputs in node order, or an empty vector when the provider has no
// kernel for the node or the kernel fails.
std::vector<Value> EvaluateConstantNode(const IExecutionProvider& provider, const Graph& graph, const Node& node);

}  // namespace onyx
