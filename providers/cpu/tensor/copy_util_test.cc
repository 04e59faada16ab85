#include "providers/cpu/tensor/copy_util.h"

#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onyx {
namespace {

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(CopyUtilTest, StridesOfIsRowMajor) {
  EXPECT_EQ(StridesOf({2, 3, 4}), Dims({12, 4, 1}));
  EXPECT_EQ(StridesOf({}), Dims({}));
}

TEST(CopyUtilTest, StridedCopyTransposes2D) {
  // [2,3] -> [3,2]: out[i][j] = in[j][i].
  std::vector<float> in = Iota(6), out(6);
  StridedCopy(DataType::kFloat, in.data(), {1, 3}, out.data(), {2, 1}, {3, 2});
  EXPECT_EQ(out, std::vector<float>({0, 3, 1, 4, 2, 5}));
}

TEST(CopyUtilTest, StridedCopyTiledTransposeMatchesNaive) {
  // Large enough (>= 8 x 8) to take the tiled path, with ragged tiles.
  const int64_t b = 3, r = 37, c = 45;
  std::vector<float> in = Iota(b * r * c), out(b * r * c);
  // in is [b, c, r]; out is [b, r, c] with out[x][i][j] = in[x][j][i].
  StridedCopy(DataType::kFloat, in.data(), {r * c, 1, r}, out.data(), {r * c, c, 1}, {b, r, c});
  for (int64_t x = 0; x < b; ++x) {
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < c; ++j) ASSERT_EQ(out[(x * r + i) * c + j], in[(x * c + j) * r + i]);
    }
  }
}

TEST(CopyUtilTest, StridedCopyBroadcastsAndReverses) {
  std::vector<int32_t> in = {1, 2, 3}, out(6);
  // Broadcast a row twice (stride 0), reading it backwards (stride -1).
  StridedCopy(DataType::kInt32, in.data() + 2, {0, -1}, out.data(), {3, 1}, {2, 3});
  EXPECT_EQ(out, std::vector<int32_t>({3, 2, 1, 3, 2, 1}));
}

TEST(CopyUtilTest, StridedCopyCopiesStrings) {
  std::vector<std::string> in = {"a", "b", "c", "d"}, out(4);
  StridedCopy(DataType::kString, in.data(), {1, 2}, out.data(), {2, 1}, {2, 2});
  EXPECT_EQ(out, std::vector<std::string>({"a", "c", "b", "d"}));
}

TEST(CopyUtilTest, StridedCopyOfEmptyShapeWritesNothing) {
  std::vector<float> in = {1}, out = {7};
  StridedCopy(DataType::kFloat, in.data(), {1, 1}, out.data(), {1, 1}, {0, 3});
  EXPECT_EQ(out[0], 7);
}

TEST(CopyUtilTest, AxisMapCopyGathersPerAxis) {
  // src [2,3]; rows {1,0}, cols {2,2,0,1} (runs and repeats).
  std::vector<int64_t> in = {0, 1, 2, 10, 11, 12}, out(8);
  AxisMapCopy(DataType::kInt64, in.data(), {2, 3}, out.data(), {{1, 0}, {2, 2, 0, 1}});
  EXPECT_EQ(out, std::vector<int64_t>({12, 12, 10, 11, 2, 2, 0, 1}));
}

TEST(CopyUtilTest, AxisMapCopyUsesRunsForContiguousMaps) {
  std::vector<uint8_t> in(128), out(2 * 40);
  std::iota(in.begin(), in.end(), 0);
  std::vector<int64_t> cols(40);
  std::iota(cols.begin(), cols.end(), 10);  // one run of 40
  AxisMapCopy(DataType::kUint8, in.data(), {2, 64}, out.data(), {{1, 0}, cols});
  for (int j = 0; j < 40; ++j) {
    EXPECT_EQ(out[j], in[64 + 10 + j]);
    EXPECT_EQ(out[40 + j], in[10 + j]);
  }
}

TEST(CopyUtilTest, FillElementsFillsStrings) {
  std::vector<std::string> out(3);
  const std::string v = "x";
  FillElements(DataType::kString, &v, out.data(), 3);
  EXPECT_EQ(out, std::vector<std::string>({"x", "x", "x"}));
}

TEST(CopyUtilTest, NormalizeAxis) {
  int64_t a = -1;
  EXPECT_TRUE(NormalizeAxis(a, 3));
  EXPECT_EQ(a, 2);
  a = 3;
  EXPECT_FALSE(NormalizeAxis(a, 3));
  a = -4;
  EXPECT_FALSE(NormalizeAxis(a, 3));
}

TEST(CopyUtilTest, ReadInt64sRejectsFloatAndMatrices) {
  std::vector<int64_t> v;
  Tensor f = Tensor::Allocate(DataType::kFloat, {2});
  EXPECT_FALSE(ReadInt64s(f, "x", &v).ok());
  Tensor m = Tensor::Allocate(DataType::kInt64, {2, 2});
  EXPECT_FALSE(ReadInt64s(m, "x", &v).ok());
  Tensor i = Tensor::Allocate(DataType::kInt32, {2});
  i.mutable_data<int32_t>()[1] = -5;
  ASSERT_TRUE(ReadInt64s(i, "x", &v).ok());
  EXPECT_EQ(v, std::vector<int64_t>({0, -5}));
}

}  // namespace
}  // namespace onyx
