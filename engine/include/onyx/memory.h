// Memory accounting of the engine's device arenas, for metrics and logs.
// All sessions of a process share one arena per device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onyx {

struct ArenaStats {
  std::string device;
  int64_t in_use_bytes = 0;
  int64_t peak_in_use_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t allocations = 0;
  int64_t extends = 0;
  int64_t largest_free_block = 0;
  double fragmentation = 0;
  std::vector<int64_t> bin_chunks_in_use;
  std::vector<int64_t> bin_chunks_free;
};

// Every device arena's numbers (today: "cpu").
std::vector<ArenaStats> GetArenaStats();
// Bin-by-bin text of every arena (the DumpMemoryLog of each).
std::string DumpArenaLogs();
// Returns fully free regions of every arena to the system.
void ShrinkArenas();

}  // namespace onyx
