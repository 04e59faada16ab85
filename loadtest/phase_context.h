// PhaseContext: the state of the phase being run that the runner shares with
// every worker — its clock origin, its levels' measured spans, and the
// counters that tell the runner when the phase has drained.
//
// The runner fills the plain fields before starting the workers and does not
// change them until the phase has drained; the atomics are updated by
// workers. Thread-safe under that rule.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "loadtest/plan.h"

namespace onyx::load {

struct PhaseContext {
  const Phase* phase = nullptr;
  int first_level = 0;                                // global index of phase->levels[0]
  int64_t t0_ns = 0;                                  // the phase's time zero, steady clock
  std::vector<int64_t> level_start_ns, level_end_ns;  // absolute measured spans
  int64_t request_budget = 0;                         // closed loop with --requests

  std::atomic<bool> sending{false};        // closed loop: restart completed calls
  std::atomic<int64_t> outstanding{0};     // dispatched and not yet completed or dropped
  std::atomic<int64_t> measured_sends{0};  // closed loop: sends counted against the budget

  // The global level of a request intended (or, closed loop, sent) at
  // `ns`; -1 outside every measured span.
  int LevelOf(int64_t ns) const {
    for (size_t i = 0; i < level_start_ns.size(); ++i) {
      if (ns >= level_start_ns[i] && ns < level_end_ns[i]) return first_level + static_cast<int>(i);
    }
    return -1;
  }
  // Whether `ns` lies in the measured span of global level `level`.
  bool InSpan(int level, int64_t ns) const {
    const int i = level - first_level;
    return i >= 0 && i < static_cast<int>(level_start_ns.size()) && ns >= level_start_ns[i] && ns < level_end_ns[i];
  }
};

}  // namespace onyx::load
