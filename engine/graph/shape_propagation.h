// Static shapes carried forward in this process, node by node, after constant
// folding made more of a graph static (a Reshape whose shape input became a
// constant). Cheaper than a whole-graph ONNX inference in a child process
// (graph/model_loader.h's ReinferShapes), which a network of computed
// Reshapes (ShuffleNet's channel shuffles) would otherwise need once per
// block.
#pragma once

#include "graph/graph.h"
#include "onyx/value_info.h"

namespace onyx {

// Whether `inferred` says more about a tensor's shape than `known` and agrees
// with it: the same type, and no known shape, or the same rank with every
// known dim equal and at least one unknown dim now known.
bool RefinesShape(const ValueInfo& known, const ValueInfo& inferred);

// One pass in topological order over the default-domain nodes of the kinds
// that shape computations pass through (PropagatesInProcess), without
// subgraphs, whose inputs all have a type and a static shape and some of whose
// outputs lack one: each runs its ONNX schema's inference with the values of
// its small constant inputs, and outputs whose shape it refines are recorded,
// so a chain of such nodes becomes static in one pass. A node whose inference
// rejects its inputs is left as it is (its kernel checks at run time). Only
// nodes that the load-time inference, run isolated, already accepted reach
// this, with more specific inputs. Returns how many values changed.
int PropagateStaticShapes(Graph& graph);

// The op types PropagateStaticShapes infers (default domain).
bool PropagatesInProcess(const std::string& op_type);

}  // namespace onyx
