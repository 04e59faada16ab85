#include "planner/lifetime.h"

#include "gtest/gtest.h"

namespace onyx {
namespace {

TEST(LifetimeTest, ReleasesAfterLastReader) {
  // slots: 0 input, 1 = A(0), 2 = B(1), 3 = C(1, 2) graph output
  std::vector<NodeSlots> nodes = {{{0}, {1}}, {{1}, {2}}, {{1, 2}, {3}}};
  auto release = ComputeReleasePoints(nodes, 4, /*keep=*/{3});
  ASSERT_EQ(release.size(), 3u);
  EXPECT_EQ(release[0], std::vector<int>({0}));
  EXPECT_TRUE(release[1].empty());
  EXPECT_EQ(release[2], (std::vector<int>{1, 2}));
}

TEST(LifetimeTest, UnreadOutputsDieAtTheirProducer) {
  std::vector<NodeSlots> nodes = {{{0}, {1, 2}}, {{1}, {3}}};
  auto release = ComputeReleasePoints(nodes, 4, {3});
  EXPECT_EQ(release[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(release[1], std::vector<int>({1}));
}

TEST(LifetimeTest, KeptAndOmittedSlotsAreNeverReleased) {
  std::vector<NodeSlots> nodes = {{{0, -1}, {1, -1}}};
  auto release = ComputeReleasePoints(nodes, 2, {0, 1});
  EXPECT_TRUE(release[0].empty());
}

}  // namespace
}  // namespace onyx
