// GridSample-20 on 5-D input and AffineGrid-20, on values worked out by hand.
#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

// X (1, 1, 2, 2, 2) = 0..7, so X[d][h][w] = 4d + 2h + w; grid points list
// (x, y, z) = (w, h, d) normalised with align_corners (-1 -> 0, 1 -> 1).
absl::StatusOr<std::vector<float>> Sample3d(const std::string& mode, const std::vector<float>& points) {
  const int64_t n = static_cast<int64_t>(points.size()) / 3;
  ModelBuilder m(20);
  m.Input("x", DataType::kFloat, {1, 1, 2, 2, 2}).Input("g", DataType::kFloat, {1, n, 1, 1, 3});
  m.Output("y", DataType::kFloat, {1, 1, n, 1, 1});
  auto& node = m.Node("GridSample", {"x", "g"}, {"y"});
  *node.add_attribute() = StringAttr("mode", mode);
  *node.add_attribute() = IntAttr("align_corners", 1);
  auto out = RunModel(m,
                      {{"x", Value(FloatTensor({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}))},
                       {"g", Value(FloatTensor({1, n, 1, 1, 3}, points))}},
                      {"y"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

TEST(GridSampleTest, TrilinearOnFiveDimensionalInput) {
  // The centre averages all eight: 3.5. (w=1, h=0, d=0) is 1; (w=0.5, h=1,
  // d=1) halfway between 6 and 7: 6.5.
  auto y = Sample3d("linear", {0, 0, 0, 1, -1, -1, 0, 1, 1});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({3.5f, 1, 6.5f}));
}

TEST(GridSampleTest, NearestOnFiveDimensionalInput) {
  // (w=1, h=1, d=0) is 3; (w=0.2 -> 0, h=0.9 -> 1, d=0.6 -> 1) is 6.
  auto y = Sample3d("nearest", {1, 1, -1, -0.6f, 0.8f, 0.2f});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({3, 6}));
}

TEST(GridSampleTest, CubicNeedsFourDimensionalInput) {
  auto y = Sample3d("cubic", {0, 0, 0});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("cubic"), std::string::npos) << y.status();
}

absl::StatusOr<std::vector<float>> RunAffineGrid(const std::vector<int64_t>& theta_dims,
                                                 const std::vector<float>& theta, const std::vector<int64_t>& size,
                                                 int64_t align_corners) {
  std::vector<int64_t> grid_dims = {size[0]};
  grid_dims.insert(grid_dims.end(), size.begin() + 2, size.end());
  grid_dims.push_back(static_cast<int64_t>(size.size()) - 2);
  ModelBuilder m(20);
  m.Input("theta", DataType::kFloat, theta_dims).Output("grid", DataType::kFloat, grid_dims);
  m.Initializer("size", Int64Tensor({static_cast<int64_t>(size.size())}, size));
  *m.Node("AffineGrid", {"theta", "size"}, {"grid"}).add_attribute() = IntAttr("align_corners", align_corners);
  auto out = RunModel(m, {{"theta", Value(FloatTensor(theta_dims, theta))}}, {"grid"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

TEST(AffineGridTest, IdentityGivesPixelCentres) {
  // Without align_corners the ends are the outer edges: W = 3 gives
  // x = -2/3, 0, 2/3 and H = 2 gives y = -1/2, 1/2.
  auto g = RunAffineGrid({1, 2, 3}, {1, 0, 0, 0, 1, 0}, {1, 1, 2, 3}, 0);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<float> expected = {-2.f / 3, -0.5f, 0, -0.5f, 2.f / 3, -0.5f,
                                       -2.f / 3, 0.5f,  0, 0.5f,  2.f / 3, 0.5f};
  ASSERT_EQ(g->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_FLOAT_EQ((*g)[i], expected[i]) << i;
}

TEST(AffineGridTest, AppliesTheAffineMap) {
  // align_corners, W = 2: x = -1, 1; H = 1: y = 1 (ONNX Runtime's single
  // point). theta maps (x, y) to (2x + 0.5, y - 1).
  auto g = RunAffineGrid({1, 2, 3}, {2, 0, 0.5f, 0, 1, -1}, {1, 1, 1, 2}, 1);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(*g, std::vector<float>({-1.5f, 0, 2.5f, 0}));
}

TEST(AffineGridTest, ThreeDimensionalGridListsXYZ) {
  // D = 2 gives z = -1, 1; H = W = 1 give y = x = 1 (align_corners).
  auto g = RunAffineGrid({1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, {1, 1, 2, 1, 1}, 1);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(*g, std::vector<float>({1, 1, -1, 1, 1, 1}));
}

}  // namespace
}  // namespace onyx
