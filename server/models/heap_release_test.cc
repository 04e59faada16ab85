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

// What an unload leaves behind: a thread (the loader) fills its arena with
// ~64 MB of small blocks, and all but a block in 512 are freed — the
// survivors, the last one included, keep the C library from shrinking the
// arena from its top, so the freed pages stay resident until released. The
// survivors are returned for the caller to free.
std::vector<void*> StrandOnAThread() {
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
  return survivors;
}

TEST(HeapReleaseTest, GivesBackPagesStrandedBetweenLiveBlocks) {
#if defined(ONYX_SANITIZED_HEAP) || !defined(__GLIBC__)
  GTEST_SKIP() << "the sanitizer's or this C library's allocator keeps its own heap";
#else
  std::vector<void*> survivors = StrandOnAThread();
  const int64_t before = ResidentBytes();
  EXPECT_TRUE(ReleaseFreedHeap());
  const int64_t after = ResidentBytes();
  for (void* block : survivors) std::free(block);
  // ~63 MB were freed between 32 live blocks; most of it must go.
  EXPECT_GT(before - after, int64_t{48} << 20)
      << "resident " << before << " -> " << after << " bytes";
#endif
}

TEST(HeapReleaseTest, ReleasesOnlyOnceMuchWasFreed) {
#if defined(ONYX_SANITIZED_HEAP) || !defined(__GLIBC__)
  GTEST_SKIP() << "the sanitizer's or this C library's allocator keeps its own heap";
#else
  HeapReleaseThrottle throttle(/*min_freed=*/size_t{32} << 20, absl::ZeroDuration());
  throttle.MaybeRelease();                // from whatever the process had free
  EXPECT_FALSE(throttle.MaybeRelease());  // nothing freed since
  std::vector<void*> small(64);
  for (void*& block : small) block = std::malloc(4000);
  for (void* block : small) std::free(block);
  EXPECT_FALSE(throttle.MaybeRelease());  // 256 KB: left to be reused
  std::vector<void*> survivors = StrandOnAThread();
  const int64_t before = ResidentBytes();
  EXPECT_TRUE(throttle.MaybeRelease());
  const int64_t after = ResidentBytes();
  for (void* block : survivors) std::free(block);
  EXPECT_GT(before - after, int64_t{48} << 20)
      << "resident " << before << " -> " << after << " bytes";
  EXPECT_FALSE(throttle.MaybeRelease());  // what it released does not count again
#endif
}

TEST(HeapReleaseTest, TheThrottleReleasesOncePerInterval) {
  HeapReleaseThrottle hourly(/*min_freed=*/0, absl::Hours(1));
  EXPECT_TRUE(hourly.MaybeRelease());
  EXPECT_FALSE(hourly.MaybeRelease());  // a burst gets one release
  EXPECT_FALSE(hourly.MaybeRelease());
  HeapReleaseThrottle every_call(/*min_freed=*/0, absl::ZeroDuration());
  EXPECT_TRUE(every_call.MaybeRelease());
  EXPECT_TRUE(every_call.MaybeRelease());
}

}  // namespace
}  // namespace onyx::server
