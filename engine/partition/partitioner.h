// Partitioning: assigns every node to an execution provider.
//
// Providers are asked in priority order (GetCapability); each takes what it can
// of the nodes still unassigned. Nodes that a preferred (non-CPU) provider
// declined and CPU took are *fallback nodes*, counted with the reason. Values
// crossing between devices get a Memcpy node (MemcpyFromHost / MemcpyToHost,
// domain com.onyx, run by the device-side provider).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "graph/graph.h"
#include "onyx/session_stats.h"

namespace onyx {

// `providers` is in priority order and ends with the CPU provider. Subgraphs are
// assigned to CPU together with their control-flow node. FAILED_PRECONDITION
// when no provider can run some node, with every provider's reason.
absl::StatusOr<PartitionReport> PartitionGraph(Graph& graph, const std::vector<const IExecutionProvider*>& providers);

// Providers the session asked for but the host could not create (name ->
// why): every node of the partitioned graph that runs on CPU and is not yet
// a fallback node becomes one, declined by the first of them; `unavailable`
// (with each reason) is recorded in the report.
void CountUnavailableProviderFallback(const Graph& graph, const std::map<std::string, std::string>& unavailable,
                                      PartitionReport& report);

}  // namespace onyx
