#include "common/kernel_scratch.h"

#include <cstdint>
#include <thread>

#include "gtest/gtest.h"

namespace onyx {
namespace {

TEST(KernelScratchTest, ReusesTheBlockAndGrowsOnlyWhenAskedForMore) {
  float* first = KernelScratch<float>(kScratchIm2Col, 1000);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  const size_t held = KernelScratchHeldBytes();
  EXPECT_GE(held, 1000 * sizeof(float));
  for (int i = 0; i < 1000; ++i) first[i] = static_cast<float>(i);
  // Smaller or equal requests return the same memory: no allocation per run.
  EXPECT_EQ(KernelScratch<float>(kScratchIm2Col, 10), first);
  EXPECT_EQ(KernelScratch<float>(kScratchIm2Col, 1000), first);
  EXPECT_EQ(KernelScratchHeldBytes(), held);
  // A larger one grows by at least half again.
  const int64_t more = static_cast<int64_t>(held / sizeof(float)) + 1;
  float* grown = KernelScratch<float>(kScratchIm2Col, more);
  ASSERT_NE(grown, nullptr);
  EXPECT_GE(KernelScratchHeldBytes(), held + held / 2);
  grown[more - 1] = 1.f;
}

TEST(KernelScratchTest, AnEmptyRequestStillGetsAPointer) {
  std::thread([] { EXPECT_NE(KernelScratch<float>(kScratchIm2Col, 0), nullptr); }).join();
}

TEST(KernelScratchTest, ThreadsHaveTheirOwnBlocks) {
  float* mine = KernelScratch<float>(kScratchIm2Col, 256);
  float* theirs = nullptr;
  size_t their_held_before = 1;
  std::thread([&] {
    their_held_before = KernelScratchHeldBytes();
    theirs = KernelScratch<float>(kScratchIm2Col, 256);
    theirs[255] = 2.f;
  }).join();
  EXPECT_EQ(their_held_before, 0u);
  EXPECT_NE(theirs, mine);
}

}  // namespace
}  // namespace onyx
