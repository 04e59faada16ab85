// Lifetime analysis: where in the execution order each value dies.
// A pure function of the node order and the slots each node reads and writes,
// so tests call it without a session.
#pragma once

#include <vector>

namespace onyx {

struct NodeSlots {
  std::vector<int> inputs;   // -1 entries are ignored
  std::vector<int> outputs;  // -1 entries are ignored
};

// For each node position, the slots to release right after that node runs: the
// slots it is the last reader of, and outputs that nobody reads. Slots listed in
// `keep` (graph outputs, constants, feeds) are never released.
std::vector<std::vector<int>> ComputeReleasePoints(const std::vector<NodeSlots>& nodes, int num_slots,
                                                   const std::vector<int>& keep);

}  // namespace onyx
