// Lane assignment: which logical stream ("lane") runs each node.
//
// Nodes of a provider with its own stream go to one lane per such provider.
// CPU nodes are spread over `cpu_lanes` lanes: a node continues the lane of a
// producer whose lane it would extend as a chain, otherwise it starts on the
// least loaded lane, so independent branches run side by side. Lane 0 is
// always a CPU lane (the caller's thread runs it). Pure function.
#pragma once

#include <string>
#include <vector>

namespace onyx {

struct LaneNode {
  std::string provider;
  bool has_stream = false;       // provider runs on its own stream
  std::vector<int> producers;    // positions (earlier in order) this node reads from
};

struct LaneAssignment {
  std::vector<int> lane_of;                  // per node
  std::vector<std::string> lane_provider;    // per lane ("" for CPU lanes)
};

LaneAssignment AssignLanes(const std::vector<LaneNode>& nodes, int cpu_lanes);

}  // namespace onyx
