// Prometheus series for the engine's arenas, read at scrape time from
// onyx::GetArenaStats() (the numbers DumpMemoryLog prints). One set per live
// arena: every loaded model version has its own arena per device (arena group
// "<model>/<version>", split back into the labels); the engine's shared arena
// appears as model="", version="" while something uses it. A version's series
// disappear when it unloads and its last tensor is gone. Thread-safe.
//
//   onyx_arena_in_use_bytes{device,model,version}                    gauge
//   onyx_arena_reserved_bytes{device,model,version}                  gauge
//   onyx_arena_peak_in_use_bytes{device,model,version}               gauge
//   onyx_arena_largest_free_block_bytes{device,model,version}        gauge
//   onyx_arena_allocations_total{device,model,version}               counter
//   onyx_arena_extends_total{device,model,version}                   counter
//   onyx_arena_bin_chunks{device,model,version,bin_min_bytes,state}  gauge: chunks per
//       size-class bin, state "in_use" or "free"; every bin is listed (a fixed set per arena)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace onyx::server {

// Splits an arena group "<model>/<version>" at its last '/' into (model,
// version); a group without '/' (the shared arena "") is (group, "").
std::pair<std::string, std::string> SplitArenaGroup(const std::string& group);

class ArenaCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

}  // namespace onyx::server
