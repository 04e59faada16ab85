#include "framework/device_arena.h"
#include "onyx/memory.h"

namespace onyx {

std::vector<ArenaStats> GetArenaStats() {
  BFCArena& arena = CpuArena();
  BFCArena::Stats s = arena.GetStats();
  ArenaStats out;
  out.device = arena.device();
  out.in_use_bytes = s.in_use_bytes;
  out.peak_in_use_bytes = s.peak_in_use_bytes;
  out.reserved_bytes = s.reserved_bytes;
  out.allocations = s.allocations;
  out.extends = s.extends;
  out.largest_free_block = s.largest_free_block;
  out.fragmentation = s.fragmentation;
  out.bin_chunks_in_use = s.bin_chunks_in_use;
  out.bin_chunks_free = s.bin_chunks_free;
  return {out};
}

std::string DumpArenaLogs() { return CpuArena().DumpMemoryLog(); }

void ShrinkArenas() { CpuArena().Shrink(); }

}  // namespace onyx
