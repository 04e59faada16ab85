// Split-18 through a session: num_outputs with an uneven last chunk, the
// split input, and the refusals ONNX's inference and ONNX Runtime 1.30 agree
// on. Expected parts are those ONNX Runtime 1.30 returns for the same models.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

// Splits x (float, `dims`) into `n` outputs with num_outputs = n at opset 18.
absl::StatusOr<std::vector<Value>> SplitNum(const std::vector<int64_t>& dims, int64_t n, int64_t axis,
                                            std::vector<int64_t> declared = {}) {
  ModelBuilder m(18);
  m.Input("x", DataType::kFloat, declared.empty() ? dims : declared);
  std::vector<std::string> outs;
  for (int64_t i = 0; i < n; ++i) {
    outs.push_back("y" + std::to_string(i));
    m.Output(outs.back(), DataType::kFloat, std::vector<int64_t>(dims.size(), -1));
  }
  auto& node = m.Node("Split", {"x"}, outs, "split");
  *node.add_attribute() = IntAttr("num_outputs", n);
  *node.add_attribute() = IntAttr("axis", axis);
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i) x[i] = static_cast<float>(i);
  return RunModel(m, {{"x", Value(FloatTensor(dims, x))}}, outs);
}

TEST(SplitTest, NumOutputsLastChunkIsSmaller) {
  // 7 into 3: chunks of ceil(7/3) = 3, the last 7 - 6 = 1.
  auto out = SplitNum({7}, 3, 0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({0, 1, 2}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({3, 4, 5}));
  EXPECT_EQ(Values<float>((*out)[2]), std::vector<float>({6}));
}

TEST(SplitTest, NumOutputsOnANegativeAxis) {
  // [[0..4], [5..9]] split along the last axis into 2: widths 3 and 2.
  auto out = SplitNum({2, 5}, 2, -1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().dims(), Dims({2, 3}));
  EXPECT_EQ((*out)[1].tensor().dims(), Dims({2, 2}));
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({0, 1, 2, 5, 6, 7}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({3, 4, 8, 9}));
}

TEST(SplitTest, NumOutputsLeavingAnEmptyLastChunkIsRefused) {
  // 4 into 3: chunks of 2 leave nothing for the third, whether the size is
  // declared or symbolic.
  auto known = SplitNum({4}, 3, 0);
  ASSERT_FALSE(known.ok());
  EXPECT_NE(known.status().message().find("the last would be empty"), std::string::npos) << known.status();
  auto symbolic = SplitNum({4}, 3, 0, {-1});
  ASSERT_FALSE(symbolic.ok());
  EXPECT_NE(symbolic.status().message().find("the last would be empty"), std::string::npos) << symbolic.status();
}

TEST(SplitTest, SplitInputAtOpset18) {
  ModelBuilder m(18);
  m.Input("x", DataType::kFloat, {6}).Output("a", DataType::kFloat, {-1}).Output("b", DataType::kFloat, {-1});
  m.Initializer("s", Int64Tensor({2}, {2, 4}));
  m.Node("Split", {"x", "s"}, {"a", "b"});
  auto out = RunModel(m, {{"x", Value(FloatTensor({6}, {0, 1, 2, 3, 4, 5}))}}, {"a", "b"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({0, 1}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({2, 3, 4, 5}));
}

TEST(SplitTest, NeitherOrBothSizesAreRefused) {
  for (bool both : {false, true}) {
    ModelBuilder m(18);
    m.Input("x", DataType::kFloat, {6}).Output("a", DataType::kFloat, {-1}).Output("b", DataType::kFloat, {-1});
    std::vector<std::string> inputs = {"x"};
    if (both) {
      m.Initializer("s", Int64Tensor({2}, {3, 3}));
      inputs.push_back("s");
    }
    auto& node = m.Node("Split", inputs, {"a", "b"});
    if (both) *node.add_attribute() = IntAttr("num_outputs", 2);
    auto out = RunModel(m, {{"x", Value(FloatTensor({6}, {0, 1, 2, 3, 4, 5}))}}, {"a", "b"});
    ASSERT_FALSE(out.ok()) << both;
    EXPECT_NE(out.status().message().find(both ? "has both" : "has neither"), std::string::npos) << out.status();
  }
}

}  // namespace
}  // namespace onyx
