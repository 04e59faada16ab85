#include "framework/device_arena.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace onyx {

BFCArena& CpuArena() {
  static BFCArena* arena = new BFCArena(CpuAllocator::Default(), BFCArena::Options{});
  return *arena;
}

namespace {

struct Entry {
  std::weak_ptr<BFCArena> arena;
  size_t limit_bytes = 0;
};

// Named groups only, by weak reference: holders (sessions, chunks) own the
// arenas, so the registry never keeps an unused arena's memory.
struct Registry {
  absl::Mutex mu;
  std::map<std::pair<std::string, std::string>, Entry> arenas ABSL_GUARDED_BY(mu);  // (device, group)
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

// The shared arena's one handle, made once so that its weak self-reference
// (OwnChunk) is set before any run and never reassigned. Holders copy it;
// more than this copy means the arena is in use.
const std::shared_ptr<BFCArena>& SharedHandle() {
  static const auto* handle = new std::shared_ptr<BFCArena>(&CpuArena(), [](BFCArena*) {});
  return *handle;
}

}  // namespace

absl::StatusOr<std::shared_ptr<BFCArena>> AcquireCpuArena(const std::string& group, size_t limit_bytes) {
  if (group.empty() && limit_bytes > 0) {
    return absl::InvalidArgumentError(absl::StrCat("the shared arena takes no limit (asked for ", limit_bytes,
                                                   " bytes); give the session an arena group"));
  }
  if (group.empty()) return SharedHandle();
  const std::string device = CpuAllocator::Default()->device();
  Registry& registry = GetRegistry();
  absl::MutexLock lock(&registry.mu);
  // Forget groups whose arena is gone, so many short-lived groups do not grow the map.
  std::erase_if(registry.arenas, [](const auto& kv) { return kv.second.arena.expired(); });
  Entry& entry = registry.arenas[{device, group}];
  if (std::shared_ptr<BFCArena> live = entry.arena.lock()) {
    if (entry.limit_bytes != limit_bytes) {
      return absl::FailedPreconditionError(absl::StrCat("arena group '", group, "' on ", device,
                                                        " is live with a limit of ", entry.limit_bytes,
                                                        " bytes (0 = none); a session asked for ", limit_bytes,
                                                        " bytes: every session of a group must use the same limit"));
    }
    return live;
  }
  BFCArena::Options options;
  options.max_bytes = limit_bytes;
  options.name = group;
  std::shared_ptr<BFCArena> arena = std::make_shared<BFCArena>(CpuAllocator::Default(), options);
  entry.arena = arena;
  entry.limit_bytes = limit_bytes;
  return arena;
}

void RegisterDeviceArena(const std::string& device, const std::string& group, const std::shared_ptr<BFCArena>& arena) {
  Registry& registry = GetRegistry();
  absl::MutexLock lock(&registry.mu);
  std::erase_if(registry.arenas, [](const auto& kv) { return kv.second.arena.expired(); });
  Entry& entry = registry.arenas[{device, group}];
  entry.arena = arena;
  entry.limit_bytes = 0;
}

std::vector<LiveArena> LiveArenas() {
  std::vector<LiveArena> out;
  const std::shared_ptr<BFCArena>& shared = SharedHandle();
  // use_count is a snapshot; good enough to decide what a stats call lists.
  if (shared.use_count() > 1 || shared->GetStats().reserved_bytes > 0) {
    out.push_back(LiveArena{CpuAllocator::Default()->device(), "", shared});
  }
  Registry& registry = GetRegistry();
  {
    absl::MutexLock lock(&registry.mu);
    for (auto it = registry.arenas.begin(); it != registry.arenas.end();) {
      std::shared_ptr<BFCArena> arena = it->second.arena.lock();
      if (arena == nullptr) {
        it = registry.arenas.erase(it);
        continue;
      }
      out.push_back(LiveArena{it->first.first, it->first.second, std::move(arena)});
      ++it;
    }
  }
  return out;
}

}  // namespace onyx
