#include "framework/device_arena.h"

namespace onyx {

BFCArena& CpuArena() {
  static BFCArena* arena = new BFCArena(CpuAllocator::Default(), BFCArena::Options{});
  return *arena;
}

}  // namespace onyx
