// Compiles a partitioned graph into an ExecutionPlan: a slot per value, one
// kernel per node created through its provider's registry, constants bound,
// and release points from lifetime analysis.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/execution_plan.h"
#include "framework/execution_provider.h"
#include "graph/graph.h"

namespace onyx {

// Every node must already carry a provider name found in `providers`. Kernel
// creation failures name the node. Subgraph values that come from an enclosing
// graph are listed in plan.outer_scope.
absl::StatusOr<std::unique_ptr<ExecutionPlan>> BuildExecutionPlan(
    const Graph& graph, const std::vector<const IExecutionProvider*>& providers);

}  // namespace onyx
