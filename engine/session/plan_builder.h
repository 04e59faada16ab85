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
//
// With `release_packed_constants`, an initializer of `graph` whose every
// reader is a kernel that packed it (OpKernel::PackedConstantInputs) is
// replaced, as soon as its last reader exists, by a tensor of its type and
// dims without bytes, so that a model's weights are not held twice (plain
// and packed) — not even at the peak of creation. Never for a graph
// output, an input a feed may override, or a value a subgraph reads; only
// for a graph whose initializers no one else shares (not a shared-weights
// group's) and that is not written out after this.
absl::StatusOr<std::unique_ptr<ExecutionPlan>> BuildExecutionPlan(
    Graph& graph, const std::vector<const IExecutionProvider*>& providers,
    const std::map<std::string, int>* parent_slots = nullptr, bool release_packed_constants = false);

// Splits a main-graph plan into lanes (see planner/lane_assignment.h) for the
// parallel executor: `cpu_lanes` CPU lanes plus one lane per provider listed
// in `stream_providers`. Leaves the plan sequential when that makes one lane.
void AssignPlanLanes(ExecutionPlan& plan, int cpu_lanes, const std::vector<std::string>& stream_providers);

}  // namespace onyx
