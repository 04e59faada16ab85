#include "server/models/heap_release.h"

#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/memory/test_heap.h"

namespace onyx::server {
namespace {

// ~64 MB stranded in a thread's arena (test_heap.h StrandResidentBlocks);
// the survivors are returned for the caller to free.
std::vector<char*> StrandOnAThread() {
  std::vector<char*> survivors;
  std::thread loader([&] { survivors = StrandResidentBlocks(/*count=*/16384, /*size=*/4000); });
  loader.join();
  return survivors;
}

TEST(HeapReleaseTest, GivesBackPagesStrandedBetweenLiveBlocks) {
#if defined(ONYX_SANITIZED_HEAP) || !defined(__GLIBC__)
  GTEST_SKIP() << "the sanitizer's or this C library's allocator keeps its own heap";
#else
  std::vector<char*> survivors = StrandOnAThread();
  const int64_t before = ResidentBytes();
  EXPECT_TRUE(ReleaseFreedHeap());
  const int64_t after = ResidentBytes();
  for (char* block : survivors) std::free(block);
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
  std::vector<char*> survivors = StrandOnAThread();
  const int64_t before = ResidentBytes();
  EXPECT_TRUE(throttle.MaybeRelease());
  const int64_t after = ResidentBytes();
  for (char* block : survivors) std::free(block);
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
