#include "server/memory/malloc_arenas.h"

#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/memory/test_heap.h"

namespace onyx::server {
namespace {

constexpr size_t kBlock = 4000;    // below the mmap threshold: from an arena
constexpr size_t kBlocks = 16384;  // ~64 MB

// A reload in small: the loader thread builds ~64 MB and frees all of it but
// a block in 512 (which keeps the C library from shrinking its arena from the
// top); while it lives on, another thread (a request thread building the next
// version) allocates as much. With one arena it reuses the freed pages; with
// an arena of its own (glibc's default for a new thread) RSS grows by 64 MB.
TEST(MallocArenasTest, PagesFreedOnOneThreadAreReusedByAnother) {
#if defined(ONYX_SANITIZED_HEAP) || !defined(__GLIBC__)
  GTEST_SKIP() << "the sanitizer's or this C library's allocator keeps its own heap";
#else
  ASSERT_EQ(LimitMallocArenas(1), 1) << "is MALLOC_ARENA_MAX set in the test's environment?";
  std::vector<char*> survivors;
  absl::Notification freed, done;
  std::thread loader([&] {
    survivors = StrandResidentBlocks(kBlocks, kBlock);
    freed.Notify();
    done.WaitForNotification();  // alive: its arena is not free for the taking
  });
  freed.WaitForNotification();
  const int64_t before = ResidentBytes();
  std::vector<char*> next;
  std::thread builder([&] { next = FillResidentBlocks(kBlocks, kBlock); });
  builder.join();
  const int64_t after = ResidentBytes();
  done.Notify();
  loader.join();
  for (char* block : next) std::free(block);
  for (char* block : survivors) std::free(block);
  EXPECT_LT(after - before, int64_t{16} << 20)
      << "resident " << before << " -> " << after << " bytes";
#endif
}

TEST(MallocArenasTest, TheEnvironmentsLimitWins) {
  ASSERT_EQ(setenv("MALLOC_ARENA_MAX", "4", 1), 0);
  EXPECT_EQ(LimitMallocArenas(2), std::nullopt);
  ASSERT_EQ(unsetenv("MALLOC_ARENA_MAX"), 0);
  ASSERT_EQ(setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=3", 1), 0);
  EXPECT_EQ(LimitMallocArenas(2), std::nullopt);
  ASSERT_EQ(unsetenv("GLIBC_TUNABLES"), 0);
}

TEST(MallocArenasTest, RefusesFewerThanOneArena) { EXPECT_EQ(LimitMallocArenas(0), std::nullopt); }

}  // namespace
}  // namespace onyx::server
