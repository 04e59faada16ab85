#include "framework/bfc_arena.h"

#include <map>
#include <random>

#include "gtest/gtest.h"

namespace onyx {
namespace {

// Counts calls into the device so tests can assert how often the arena extends.
class CountingAllocator final : public IAllocator {
 public:
  absl::StatusOr<void*> Allocate(size_t bytes) override {
    ++allocations;
    live_bytes += bytes;
    auto p = CpuAllocator::Default()->Allocate(bytes);
    sizes[*p] = bytes;
    return p;
  }
  void Free(void* p) override {
    ++frees;
    live_bytes -= sizes[p];
    sizes.erase(p);
    CpuAllocator::Default()->Free(p);
  }
  const char* device() const override { return "counting"; }
  int allocations = 0;
  int frees = 0;
  size_t live_bytes = 0;
  std::map<void*, size_t> sizes;
};

size_t Rounded(size_t bytes) { return std::max<size_t>(256, (bytes + 255) / 256 * 256); }

TEST(BFCArenaTest, RandomSequencesKeepTheInvariants) {
  for (auto strategy : {BFCArena::ExtendStrategy::kNextPowerOfTwo, BFCArena::ExtendStrategy::kSameAsRequested}) {
    CountingAllocator device;
    BFCArena arena(&device, {.initial_chunk_bytes = 4096, .max_bytes = 0, .extend_strategy = strategy});
    std::mt19937 rng(42);
    std::map<char*, size_t> live;  // reference model: pointer -> rounded size
    int64_t expected_in_use = 0, expected_peak = 0, expected_allocs = 0;
    for (int step = 0; step < 5000; ++step) {
      bool allocate = live.empty() || rng() % 100 < 55;
      if (allocate) {
        size_t bytes = rng() % 3 == 0 ? rng() % 100000 : rng() % 2000;
        auto p = arena.Allocate(bytes);
        ASSERT_TRUE(p.ok()) << p.status();
        char* c = static_cast<char*>(*p);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % 64, 0u);
        // No overlap with any live allocation.
        auto next = live.lower_bound(c);
        if (next != live.end()) EXPECT_LE(c + Rounded(bytes), next->first);
        if (next != live.begin()) {
          auto prev = std::prev(next);
          EXPECT_LE(prev->first + prev->second, c);
        }
        std::memset(c, 0xab, bytes);
        live[c] = Rounded(bytes);
        expected_in_use += Rounded(bytes);
        expected_peak = std::max(expected_peak, expected_in_use);
        ++expected_allocs;
      } else {
        auto it = live.begin();
        std::advance(it, rng() % live.size());
        arena.Free(it->first);
        expected_in_use -= it->second;
        live.erase(it);
      }
      if (step % 250 == 0) {
        BFCArena::Stats s = arena.GetStats();
        EXPECT_EQ(s.in_use_bytes, expected_in_use);
        EXPECT_EQ(s.peak_in_use_bytes, expected_peak);
        EXPECT_EQ(s.allocations, expected_allocs);
        EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(device.live_bytes));
        EXPECT_EQ(s.extends, device.allocations);
        EXPECT_EQ(s.in_use_bytes + s.free_bytes, s.reserved_bytes);
      }
    }
    for (auto& [p, size] : live) arena.Free(p);
    // Full coalescing: every region is one free chunk again.
    BFCArena::Stats s = arena.GetStats();
    EXPECT_EQ(s.in_use_bytes, 0);
    int64_t free_chunks = 0;
    for (int64_t n : s.bin_chunks_free) free_chunks += n;
    EXPECT_EQ(free_chunks, device.allocations);
    size_t largest_region = 0;
    for (auto& [p, size] : device.sizes) largest_region = std::max(largest_region, size);
    EXPECT_EQ(s.largest_free_block, static_cast<int64_t>(largest_region));
    arena.Shrink();
    EXPECT_EQ(arena.GetStats().reserved_bytes, 0);
    EXPECT_EQ(device.live_bytes, 0u);
  }
}

TEST(BFCArenaTest, WarmFixedSizesNeverTouchTheDevice) {
  CountingAllocator device;
  BFCArena arena(&device, {});
  std::vector<size_t> sizes = {1000, 64 << 10, 300, 5 << 20, 7};
  for (int round = 0; round < 100; ++round) {
    std::vector<void*> ptrs;
    for (size_t s : sizes) ptrs.push_back(*arena.Allocate(s));
    for (void* p : ptrs) arena.Free(p);
    if (round == 0) EXPECT_GE(device.allocations, 1);
  }
  int after_warmup = device.allocations;
  for (int round = 0; round < 100; ++round) {
    std::vector<void*> ptrs;
    for (size_t s : sizes) ptrs.push_back(*arena.Allocate(s));
    for (void* p : ptrs) arena.Free(p);
  }
  EXPECT_EQ(device.allocations, after_warmup);
  EXPECT_EQ(device.frees, 0);
}

TEST(BFCArenaTest, LimitReturnsResourceExhaustedAndRecovers) {
  CountingAllocator device;
  BFCArena arena(&device, {.initial_chunk_bytes = 1024, .max_bytes = 1 << 20});
  auto big = arena.Allocate(900 << 10);
  ASSERT_TRUE(big.ok());
  auto too_much = arena.Allocate(200 << 10);
  EXPECT_TRUE(absl::IsResourceExhausted(too_much.status())) << too_much.status();
  EXPECT_NE(too_much.status().message().find("limit of 1048576"), absl::string_view::npos);
  arena.Free(*big);
  EXPECT_TRUE(arena.Allocate(200 << 10).ok());
}

TEST(BFCArenaTest, InjectedFailureHitsExactlyTheChosenAllocationOnce) {
  CountingAllocator device;
  BFCArena arena(&device, {.initial_chunk_bytes = 1 << 16, .max_bytes = 0, .name = "t"});
  arena.FailAllocationAfter(2);
  auto a = arena.Allocate(100);
  auto b = arena.Allocate(100);
  auto c = arena.Allocate(100);
  auto d = arena.Allocate(100);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(c.status())) << c.status();
  EXPECT_EQ(c.status().message(), "arena 't': injected allocation failure (100 bytes)");
  EXPECT_EQ(arena.GetStats().allocations, 3);
  EXPECT_EQ(arena.GetStats().in_use_bytes, 3 * static_cast<int64_t>(BFCArena::kMinChunk));
  arena.FailAllocationAfter(0);
  arena.FailAllocationAfter(-1);  // disarmed before it fired
  auto e = arena.Allocate(100);
  EXPECT_TRUE(e.ok()) << e.status();
  for (void* p : {*a, *b, *d, *e}) arena.Free(p);
  EXPECT_EQ(arena.GetStats().in_use_bytes, 0);
}

TEST(BFCArenaTest, StreamFreedChunksWaitForSynchronization) {
  CountingAllocator device;
  BFCArena arena(
      &device,
      {.initial_chunk_bytes = 4096, .max_bytes = 0, .extend_strategy = BFCArena::ExtendStrategy::kSameAsRequested});
  void* a = *arena.AllocateOnStream(4096, /*stream=*/1);
  arena.Free(a);
  // Same stream: reused at once.
  void* again = *arena.AllocateOnStream(4096, 1);
  EXPECT_EQ(again, a);
  arena.Free(again);
  // Another stream must not get it before stream 1 is synchronised.
  void* other = *arena.AllocateOnStream(4096, 2);
  EXPECT_NE(other, a);
  arena.Free(other);
  arena.SynchronizeStream(1);
  void* after_sync = *arena.AllocateOnStream(4096, 3);
  EXPECT_TRUE(after_sync == a || after_sync == other);
  EXPECT_EQ(device.allocations, 2);
}

TEST(BFCArenaTest, DumpMemoryLogReportsBins) {
  CountingAllocator device;
  BFCArena arena(&device, {});
  void* p = *arena.Allocate(1000);
  std::string log = arena.DumpMemoryLog();
  EXPECT_NE(log.find("in use 1024 B"), std::string::npos) << log;
  EXPECT_NE(log.find("bin  2 (>= 1024 B): in use 1 chunks 1024 B"), std::string::npos) << log;
  arena.Free(p);
}

}  // namespace
}  // namespace onyx
