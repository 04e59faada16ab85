// Function inlining: a node that no provider has a kernel for, but whose op is
// defined by a function body — in the ONNX schema (Celu, Range, the loss ops,
// window functions ...) or among the model's local functions — is replaced by
// that body, with values renamed and attribute references resolved (to the
// caller's attribute or the schema default).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "graph/graph.h"

namespace onyx {

// One round: returns the number of nodes expanded (in this graph and its
// subgraphs). Bodies may call function ops in turn: callers re-infer shapes
// (context-dependent bodies depend on input types) and call again until 0.
absl::StatusOr<int> InlineFunctions(Graph& graph, const std::vector<const IExecutionProvider*>& providers,
                                    const std::vector<onnx::FunctionProto>& local_functions);

}  // namespace onyx
