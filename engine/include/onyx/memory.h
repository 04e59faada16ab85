// Memory accounting of the engine's arenas, for metrics and logs. There is
// one arena per (device, group): SessionOptions::arena_group names it, "" is
// the process-wide shared arena. A group's arena exists while a session of
// the group or a tensor allocated from it is alive. Thread-safe; these calls
// take the arena registry's lock, never a session's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onyx {

// Every arena's allocation granularity and alignment in bytes: its smallest
// chunk. ArenaStats' bin b counts chunks of at least kArenaMinChunkBytes << b
// bytes (the last bin is open-ended).
inline constexpr int64_t kArenaMinChunkBytes = 256;

struct ArenaStats {
  std::string device;
  std::string group;  // SessionOptions::arena_group; "" = the shared arena
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

// One entry per live arena, ordered by (device, group). The shared arena is
// listed while a session or tensor holds it or it still reserves memory.
std::vector<ArenaStats> GetArenaStats();
// Bin-by-bin text of every live arena (its DumpMemoryLog), each headed by
// "arena on <device>, group '<group>'".
std::string DumpArenaLogs();
// Returns fully free regions of every live arena to the system.
void ShrinkArenas();

}  // namespace onyx
