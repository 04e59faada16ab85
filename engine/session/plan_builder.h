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
// creation failures name the node. Subgraphs (If/Loop/Scan bodies) are compiled
// recursively; `parent_slots` is the enclosing plan's slot table, from which a
// subgraph's outer-scope values are bound (nullptr for the main graph).
absl::StatusOr<std::unique_ptr<ExecutionPlan>> BuildExecutionPlan(
    const Graph& graph, const std::vector<const IExecutionProvider*>& providers,
    const std::map<std::string, int>* parent_slots = nullptr);

// Splits a main-graph plan into lanes (see planner/lane_assignment.h) for the
// parallel executor: `cpu_lanes` CPU lanes plus one lane per provider listed
// in `stream_providers`. Leaves the plan sequential when that makes one lane.
void AssignPlanLanes(ExecutionPlan& plan, int cpu_lanes, const std::vector<std::string>& stream_providers);

}  // namespace onyx
