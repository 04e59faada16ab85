// BFCArena: best-fit-with-coalescing memory arena over a device allocator.
//
//   BFCArena arena(CpuAllocator::Default(), BFCArena::Options{.max_bytes = 1 << 30});
//   ASSIGN_OR_RETURN(void* p, arena.Allocate(4096));
//   ...
//   arena.Free(p);                  // back to a bin, never to the device
//   BFCArena::Stats s = arena.GetStats();
//
// Memory comes from the device allocator in regions (Extend); each region is
// cut into chunks, kept in size-class bins when free, split on allocation and
// merged with free neighbours on release. A warm workload with fixed sizes
// therefore performs no device allocations at all. Exceeding `max_bytes`
// returns RESOURCE_EXHAUSTED; nothing aborts.
//
// Streams: a chunk freed by a stream is handed to a different stream only
// after the freeing stream was synchronised (SynchronizeStream), so device work
// still reading it cannot race its next owner.
// Lifetime: when the arena itself is owned by a std::shared_ptr (the per-group
// arenas of framework/device_arena.h), OwnChunk() makes every chunk it wraps
// keep the arena alive, so a tensor may outlive the session that made it.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "framework/allocator.h"
#include "onyx/memory.h"

namespace onyx {

class BFCArena final : public IAllocator, public std::enable_shared_from_this<BFCArena> {
 public:
  enum class ExtendStrategy { kNextPowerOfTwo, kSameAsRequested };

  struct Options {
    size_t initial_chunk_bytes = 1 << 20;  // first region at least this big
    size_t max_bytes = 0;                  // cap on reserved bytes; 0 = no cap
    ExtendStrategy extend_strategy = ExtendStrategy::kNextPowerOfTwo;
    std::string name;  // e.g. the arena group; named in errors
  };

  struct Stats {
    int64_t in_use_bytes = 0;
    int64_t peak_in_use_bytes = 0;
    int64_t reserved_bytes = 0;  // obtained from the device allocator
    int64_t allocations = 0;     // successful Allocate calls
    int64_t extends = 0;         // regions obtained from the device
    int64_t largest_free_block = 0;
    int64_t free_bytes = 0;
    double fragmentation = 0;                // 1 - largest_free_block / free_bytes
    std::vector<int64_t> bin_chunks_in_use;  // per bin
    std::vector<int64_t> bin_chunks_free;    // per bin
  };

  static constexpr int kNumBins = 21;  // 256 B << i, the last bin open-ended
  // Allocation granularity and alignment (onyx/memory.h).
  static constexpr size_t kMinChunk = static_cast<size_t>(kArenaMinChunkBytes);

  BFCArena(IAllocator* device, Options options);
  ~BFCArena() override;

  absl::StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* p) override;
  const char* device() const override { return device_->device(); }
  bool host_accessible() const override { return device_->host_accessible(); }

  // Allocation on behalf of `stream` (>= 0); see the class comment.
  absl::StatusOr<void*> AllocateOnStream(size_t bytes, int stream);
  // Chunks freed by `stream` so far may now go to any stream.
  void SynchronizeStream(int stream);

  // Shared owner of chunk `p` (from Allocate): frees it when the last copy goes.
  // If this arena is held by a shared_ptr, the owner holds the arena too.
  std::shared_ptr<void> OwnChunk(void* p);

  // Returns regions that are entirely free to the device allocator.
  void Shrink();

  // Fault injection for tests: allocation call number `successes` from now
  // (0: the next one) fails, once, with RESOURCE_EXHAUSTED ("injected
  // allocation failure", naming the arena); -1 disarms.
  void FailAllocationAfter(int64_t successes);

  Stats GetStats() const;
  // Bin-by-bin accounting, the same numbers as GetStats.
  std::string DumpMemoryLog() const;

 private:
  struct Chunk {
    char* ptr = nullptr;
    size_t size = 0;
    size_t requested = 0;
    bool in_use = false;
    int region = -1;
    int prev = -1;  // neighbours within the region, by index into chunks_
    int next = -1;
    int stream = -1;          // stream that freed it (-1: free for all)
    int64_t freed_epoch = 0;  // that stream's epoch when it was freed
  };
  struct Region {
    char* base = nullptr;
    size_t size = 0;
    bool live = false;
  };

  static int BinFor(size_t bytes);
  int NewChunk() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InsertFree(int c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveFree(int c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int FindChunk(size_t bytes, int stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Extend(size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Merge(int c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Stats StatsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  IAllocator* const device_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<Chunk> chunks_ ABSL_GUARDED_BY(mu_);
  std::vector<int> spare_chunks_ ABSL_GUARDED_BY(mu_);
  std::vector<Region> regions_ ABSL_GUARDED_BY(mu_);
  // Free chunks per bin, ordered by (size, address) for best fit.
  std::vector<std::multimap<std::pair<size_t, uintptr_t>, int>> bins_ ABSL_GUARDED_BY(mu_);
  std::map<char*, int> by_ptr_ ABSL_GUARDED_BY(mu_);  // in-use chunks
  std::map<int, int64_t> stream_epochs_ ABSL_GUARDED_BY(mu_);
  int64_t in_use_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t peak_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t reserved_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t allocations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t extends_ ABSL_GUARDED_BY(mu_) = 0;
  size_t next_region_bytes_ ABSL_GUARDED_BY(mu_);
  int64_t fail_after_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace onyx
