#include "providers/cpu/math/reduce_plan.h"

#include "gtest/gtest.h"

namespace onyx {
namespace {

TEST(ReducePlanTest, TrailingAxesReduceContiguousRows) {
  // [2, 3, 4] over {1, 2}: two rows of 12 contiguous elements.
  ReducePlan p = ReducePlan::Make({2, 3, 4}, {1, 2});
  EXPECT_FALSE(p.inner_kept);
  EXPECT_EQ(p.inner, 12);
  EXPECT_EQ(p.keep, std::vector<int64_t>({0, 12}));
  EXPECT_EQ(p.red, std::vector<int64_t>({0}));
  EXPECT_EQ(p.reduced_count, 12);
  EXPECT_EQ(p.out_keepdims, Dims({2, 1, 1}));
  EXPECT_EQ(p.out_squeezed, Dims({2}));
}

TEST(ReducePlanTest, LeadingAxisKeepsContiguousInner) {
  // [3, 4] over {0}: one output row of 4, reduced rows at offsets 0, 4, 8.
  ReducePlan p = ReducePlan::Make({3, 4}, {0});
  EXPECT_TRUE(p.inner_kept);
  EXPECT_EQ(p.inner, 4);
  EXPECT_EQ(p.keep, std::vector<int64_t>({0}));
  EXPECT_EQ(p.red, std::vector<int64_t>({0, 4, 8}));
}

TEST(ReducePlanTest, SizeOneDimsAreIgnoredWhenMerging) {
  // [2, 1, 3] over {1}: nothing is reduced; the kept dims merge into one block.
  ReducePlan p = ReducePlan::Make({2, 1, 3}, {1});
  EXPECT_TRUE(p.inner_kept);
  EXPECT_EQ(p.inner, 6);
  EXPECT_EQ(p.reduced_count, 1);
  EXPECT_EQ(p.out_squeezed, Dims({2, 3}));
}

TEST(ReducePlanTest, EmptyAxesReduceEverything) {
  ReducePlan p = ReducePlan::Make({2, 3}, {});
  EXPECT_EQ(p.reduced_count, 6);
  EXPECT_EQ(p.out_keepdims, Dims({1, 1}));
  EXPECT_TRUE(p.out_squeezed.empty());
}

TEST(ReducePlanTest, NormalizeAxesRejectsOutOfRangeAndRepeats) {
  EXPECT_EQ(*NormalizeAxes({-1, 0}, 3), std::vector<int64_t>({2, 0}));
  EXPECT_FALSE(NormalizeAxes({3}, 3).ok());
  EXPECT_FALSE(NormalizeAxes({1, -2}, 3).ok());
}

}  // namespace
}  // namespace onyx
