#include "framework/device_arena.h"
#include "onyx/memory.h"

namespace onyx {

std::vector<ArenaStats> GetArenaStats() {
  std::vector<ArenaStats> stats;
  for (const LiveArena& live : LiveArenas()) {
    BFCArena::Stats s = live.arena->GetStats();
    ArenaStats out;
    out.device = live.device;
    out.group = live.group;
    out.in_use_bytes = s.in_use_bytes;
    out.peak_in_use_bytes = s.peak_in_use_bytes;
    out.reserved_bytes = s.reserved_bytes;
    out.allocations = s.allocations;
    out.extends = s.extends;
    out.largest_free_block = s.largest_free_block;
    out.fragmentation = s.fragmentation;
    out.bin_chunks_in_use = s.bin_chunks_in_use;
    out.bin_chunks_free = s.bin_chunks_free;
    stats.push_back(std::move(out));
  }
  return stats;
}

std::string DumpArenaLogs() {
  std::string logs;
  for (const LiveArena& live : LiveArenas()) {
    logs += "arena on " + live.device + ", group '" + live.group + "'\n";
    logs += live.arena->DumpMemoryLog();
    if (!logs.empty() && logs.back() != '\n') logs += '\n';
  }
  return logs;
}

void ShrinkArenas() {
  for (const LiveArena& live : LiveArenas()) live.arena->Shrink();
}

}  // namespace onyx
