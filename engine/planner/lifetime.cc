#include "planner/lifetime.h"

namespace onyx {

std::vector<std::vector<int>> ComputeReleasePoints(const std::vector<NodeSlots>& nodes, int num_slots,
                                                   const std::vector<int>& keep) {
  std::vector<int> last_use(num_slots, -1);
  std::vector<bool> kept(num_slots, false);
  for (int k : keep) {
    if (k >= 0 && k < num_slots) kept[k] = true;
  }
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    for (int s : nodes[i].outputs) {
      if (s >= 0 && last_use[s] < i) last_use[s] = i;
    }
    for (int s : nodes[i].inputs) {
      if (s >= 0) last_use[s] = i;
    }
  }
  std::vector<std::vector<int>> release(nodes.size());
  for (int s = 0; s < num_slots; ++s) {
    if (!kept[s] && last_use[s] >= 0) release[last_use[s]].push_back(s);
  }
  return release;
}

}  // namespace onyx
