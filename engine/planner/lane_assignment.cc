#include "planner/lane_assignment.h"

#include <algorithm>
#include <map>

namespace onyx {

LaneAssignment AssignLanes(const std::vector<LaneNode>& nodes, int cpu_lanes) {
  cpu_lanes = std::max(cpu_lanes, 1);
  LaneAssignment out;
  out.lane_of.assign(nodes.size(), 0);
  out.lane_provider.assign(cpu_lanes, "");
  std::vector<int> tail(cpu_lanes, -1);    // last node placed on each CPU lane
  std::vector<int> load(cpu_lanes, 0);
  std::map<std::string, int> device_lane;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const LaneNode& node = nodes[n];
    if (node.has_stream) {
      auto it = device_lane.find(node.provider);
      if (it == device_lane.end()) {
        it = device_lane.emplace(node.provider, static_cast<int>(out.lane_provider.size())).first;
        out.lane_provider.push_back(node.provider);
      }
      out.lane_of[n] = it->second;
      continue;
    }
    int lane = -1;
    for (int p : node.producers) {
      int pl = out.lane_of[p];
      if (pl < cpu_lanes && tail[pl] == p) {
        lane = pl;
        break;
      }
    }
    if (lane < 0) lane = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    out.lane_of[n] = lane;
    tail[lane] = static_cast<int>(n);
    ++load[lane];
  }
  return out;
}

}  // namespace onyx
