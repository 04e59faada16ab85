// Prometheus series for the engine's device arenas, read at scrape time from
// onyx::GetArenaStats() (the numbers DumpMemoryLog prints). One set per
// device: the arenas are process-wide, every model's sessions share their
// device's arena, so nothing here is per model. Thread-safe.
//
//   onyx_arena_in_use_bytes{device}                    gauge
//   onyx_arena_reserved_bytes{device}                  gauge
//   onyx_arena_peak_in_use_bytes{device}               gauge
//   onyx_arena_largest_free_block_bytes{device}        gauge
//   onyx_arena_allocations_total{device}               counter
//   onyx_arena_extends_total{device}                   counter
//   onyx_arena_bin_chunks{device,bin_min_bytes,state}  gauge: chunks per size-class bin,
//       state "in_use" or "free"; every bin is listed (a fixed set per device)
#pragma once

#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace onyx::server {

class ArenaCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

}  // namespace onyx::server
