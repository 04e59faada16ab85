#include "server/models/heap_release.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ONYX_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ONYX_SANITIZED_HEAP 1
#endif
#endif

namespace onyx::server {
namespace {

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// What a reload leaves behind: a thread (the loader) fills its arena with
// small blocks, and all but a few scattered ones are freed — the survivors,
// the last one included, keep the C library from shrinking the arena from
// its top, so the freed pages stay resident until released.
TEST(HeapReleaseTest, GivesBackPagesStrandedBetweenLiveBlocks) {
#if defined(ONYX_SANITIZED_HEAP) || !defined(__GLIBC__)
  GTEST_SKIP() << "the sanitizer's or this C library's allocator keeps its own heap";
#else
  constexpr size_t kBlock = 4000;    // below the mmap threshold: from the arena
  constexpr size_t kBlocks = 16384;  // ~64 MB
  std::vector<void*> survivors;
  std::thread loader([&] {
    std::vector<char*> blocks(kBlocks);
    for (char*& block : blocks) {
      block = static_cast<char*>(std::malloc(kBlock));
      std::memset(block, 1, kBlock);  // resident
    }
    for (size_t i = 0; i < kBlocks; ++i) {
      if (i % 512 == 511) {
        survivors.push_back(blocks[i]);
      } else {
        std::free(blocks[i]);
      }
    }
  });
  loader.join();
  const int64_t before = ResidentBytes();
  EXPECT_TRUE(ReleaseFreedHeap());
  const int64_t after = ResidentBytes();
  for (void* block : survivors) std::free(block);
  // ~63 MB were freed between 32 live blocks; most of it must go.
  EXPECT_GT(before - after, int64_t{48} << 20)
      << "resident " << before << " -> " << after << " bytes";
#endif
}

TEST(HeapReleaseTest, TheThrottleReleasesOncePerInterval) {
  HeapReleaseThrottle hourly(absl::Hours(1));
  EXPECT_TRUE(hourly.MaybeRelease());
  EXPECT_FALSE(hourly.MaybeRelease());  // a burst gets one release
  EXPECT_FALSE(hourly.MaybeRelease());
  HeapReleaseThrottle every_call(absl::ZeroDuration());
  EXPECT_TRUE(every_call.MaybeRelease());
  EXPECT_TRUE(every_call.MaybeRelease());
}

}  // namespace
}  // namespace onyx::server
