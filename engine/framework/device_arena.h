// The process-wide arena of each device. Sessions of every model share it, so
// memory freed by one model's run serves the next request of any model, and
// the server exports one set of numbers per device.
#pragma once

#include "framework/bfc_arena.h"

namespace onyx {

// The host-memory arena (over CpuAllocator). Never destroyed.
BFCArena& CpuArena();

}  // namespace onyx
