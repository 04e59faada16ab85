// When the process re-executes itself with huge-page malloc, and with what
// GLIBC_TUNABLES: every case written out by hand.
#include "onyx/huge_page_malloc.h"

#include "gtest/gtest.h"

namespace onyx {
namespace {

TEST(HugePageMallocTest, AddsTheTunableWhereTheKernelOffersHugePages) {
  EXPECT_EQ(HugePageTunables(nullptr, nullptr, "always [madvise] never\n", true), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(HugePageTunables(nullptr, nullptr, "[always] madvise never\n", true), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(HugePageTunables("", nullptr, "always [madvise] never", true), "glibc.malloc.hugetlb=1");
}

TEST(HugePageMallocTest, KeepsTheTunablesAlreadySet) {
  EXPECT_EQ(HugePageTunables("glibc.malloc.arena_max=2", nullptr, "always [madvise] never", true),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
}

TEST(HugePageMallocTest, RunsAsIsWhenThereIsNothingToDo) {
  // Huge pages off, or no such file (not Linux, no sysfs).
  EXPECT_EQ(HugePageTunables(nullptr, nullptr, "always madvise [never]\n", true), std::nullopt);
  EXPECT_EQ(HugePageTunables(nullptr, nullptr, "", true), std::nullopt);
  // Chosen by the user (either way), or by the re-executed process itself.
  EXPECT_EQ(HugePageTunables("glibc.malloc.hugetlb=0", nullptr, "always [madvise] never", true), std::nullopt);
  EXPECT_EQ(HugePageTunables("glibc.malloc.hugetlb=1", nullptr, "always [madvise] never", true), std::nullopt);
  // Off by default (onyxd) unless asked for; opted out.
  EXPECT_EQ(HugePageTunables(nullptr, nullptr, "always [madvise] never", false), std::nullopt);
  EXPECT_EQ(HugePageTunables(nullptr, "1", "always [madvise] never", false), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(HugePageTunables(nullptr, "1", "always madvise [never]", false), std::nullopt);
  EXPECT_EQ(HugePageTunables(nullptr, "0", "always [madvise] never", true), std::nullopt);
  EXPECT_EQ(HugePageTunables(nullptr, "1", "always [madvise] never", true), "glibc.malloc.hugetlb=1");
}

}  // namespace
}  // namespace onyx
