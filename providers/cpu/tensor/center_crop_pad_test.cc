// CenterCropPad-18 through a session: centred crops and zero pads, the odd
// element going to the end, named (and negative) axes, and refusals.
// Expected values worked by hand; ONNX Runtime 1.30 returns the same.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

// Crops/pads iota(dims) + 1 to `lengths` on `axes` (all when empty).
absl::StatusOr<Value> CropPad(const std::vector<int64_t>& dims, const std::vector<int64_t>& lengths,
                              const std::vector<int64_t>& axes = {}) {
  ModelBuilder m(18);
  m.Input("x", DataType::kFloat, dims).Output("y", DataType::kFloat, std::vector<int64_t>(dims.size(), -1));
  m.Initializer("s", Int64Tensor({static_cast<int64_t>(lengths.size())}, lengths));
  auto& node = m.Node("CenterCropPad", {"x", "s"}, {"y"}, "ccp");
  if (!axes.empty()) *node.add_attribute() = IntsAttr("axes", axes);
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i) x[i] = static_cast<float>(i + 1);
  auto out = RunModel(m, {{"x", Value(FloatTensor(dims, x))}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(CenterCropPadTest, CropsAroundTheCentre) {
  // [1..5] to 3 drops one at each end; [1..6] to 3 drops one before, two after.
  auto odd = CropPad({5}, {3});
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(Values<float>(*odd), std::vector<float>({2, 3, 4}));
  auto even = CropPad({6}, {3});
  ASSERT_TRUE(even.ok()) << even.status();
  EXPECT_EQ(Values<float>(*even), std::vector<float>({2, 3, 4}));
}

TEST(CenterCropPadTest, PadsAroundTheCentreWithZeros) {
  // [1, 2, 3] to 6: one zero before, two after.
  auto y = CropPad({3}, {6});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>(*y), std::vector<float>({0, 1, 2, 3, 0, 0}));
}

TEST(CenterCropPadTest, CropsOneAxisAndPadsAnother) {
  // [[1..4], [5..8], [9..12]] to [5, 1]: rows padded (1 before, 1 after),
  // columns cropped to column 1.
  auto y = CropPad({3, 4}, {5, 1});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({5, 1}));
  EXPECT_EQ(Values<float>(*y), std::vector<float>({0, 2, 6, 10, 0}));
}

TEST(CenterCropPadTest, NamedAxesInAnyOrder) {
  // Axis 2 (length 4) cropped to 1 (column 1), axis 0 (2) padded to 4.
  auto y = CropPad({2, 3, 4}, {1, 4}, {-1, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({4, 3, 1}));
  EXPECT_EQ(Values<float>(*y), std::vector<float>({0, 0, 0, 2, 6, 10, 14, 18, 22, 0, 0, 0}));
}

TEST(CenterCropPadTest, BadShapeOrAxesAreRefused) {
  for (const auto& [lengths, axes, message] :
       std::vector<std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::string>>{
           {{2}, {}, "expected 2"}, {{2, 2}, {1, -1}, "more than once"}, {{-1}, {0}, "negative"}}) {
    auto y = CropPad({3, 4}, lengths, axes);
    ASSERT_FALSE(y.ok()) << message;
    EXPECT_NE(y.status().message().find(message), std::string::npos) << y.status();
  }
}

}  // namespace
}  // namespace onyx
