// The engine's arenas, one per (device, group). Group "" is the process-wide
// shared arena of the device (CpuArena(), never destroyed): sessions of every
// model share it, so memory freed by one model's run serves any model's next
// request. A non-empty group (a server uses "<model>/<version>") gets an arena
// of its own, created by the first session of the group and destroyed, its
// memory returned to the system, when the last session of the group and the
// last tensor allocated from it are gone.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<BFCArena> arena, AcquireCpuArena("mlp/1", 64 << 20));
//   ... allocate through arena->OwnChunk(*arena->Allocate(n)) ...
//   for (const LiveArena& a : LiveArenas()) a.arena->GetStats();
//
// The registry (weak references, under a mutex) is touched only when sessions
// are created and by stats calls, never per run. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/bfc_arena.h"

namespace onyx {

// The shared host-memory arena (over CpuAllocator), group "". Never destroyed.
BFCArena& CpuArena();

// The host arena of `group`, created on first use with a cap of `limit_bytes`
// (0 = none). Holding the returned pointer keeps the arena alive. Every
// holder of a group must agree on the limit: FAILED_PRECONDITION names the
// group, the live arena's limit and the one asked for (the arena keeps its
// limit until all its holders are gone). The shared group "" takes no limit
// (INVALID_ARGUMENT if one is asked for).
absl::StatusOr<std::shared_ptr<BFCArena>> AcquireCpuArena(const std::string& group, size_t limit_bytes);

struct LiveArena {
  std::string device;
  std::string group;  // "" = the shared arena
  std::shared_ptr<BFCArena> arena;
};

// Lists a provider's device arena (e.g. "cuda:0", "test") in LiveArenas()
// and the engine's arena metrics under (device, group) for as long as it
// lives (the registry holds a weak reference); registering the same pair
// again replaces it. A provider with an arena per instance names each
// instance's group ("" for a single process-wide arena).
void RegisterDeviceArena(const std::string& device, const std::string& group, const std::shared_ptr<BFCArena>& arena);

// Every arena with a holder, by (device, group); the shared arena also while
// it still reserves memory after its last holder went.
std::vector<LiveArena> LiveArenas();

}  // namespace onyx
