// Pad-18 (axes input) and Pad-19 (wrap) through a session. Expected values are
// ONNX Runtime 1.30's for the same models, except where a pad is longer than
// the wrapped axis: there ONNX Runtime leaves zeros and the values are
// numpy.pad(mode='wrap')'s, which the ONNX spec names.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

struct PadCase {
  std::vector<int64_t> dims;
  std::vector<int64_t> pads;
  std::string mode;
  std::vector<int64_t> axes;  // none when empty
  int64_t opset = 19;
  float value = 0;
};

// Pads iota(dims) and returns the output.
absl::StatusOr<Value> RunPad(const PadCase& c) {
  ModelBuilder m(c.opset);
  m.Input("x", DataType::kFloat, c.dims).Output("y", DataType::kFloat, std::vector<int64_t>(c.dims.size(), -1));
  m.Initializer("p", Int64Tensor({static_cast<int64_t>(c.pads.size())}, c.pads));
  m.Initializer("v", FloatTensor({}, {c.value}));
  std::vector<std::string> inputs = {"x", "p", "v"};
  if (!c.axes.empty()) {
    m.Initializer("a", Int64Tensor({static_cast<int64_t>(c.axes.size())}, c.axes));
    inputs.push_back("a");
  }
  *m.Node("Pad", inputs, {"y"}, "pad").add_attribute() = StringAttr("mode", c.mode);
  int64_t count = 1;
  for (int64_t d : c.dims) count *= d;
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i) x[i] = static_cast<float>(i);
  auto out = RunModel(m, {{"x", Value(FloatTensor(c.dims, x))}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(PadTest, WrapRepeatsTheAxis) {
  // [0, 1, 2] padded (2, 2): [1, 2 | 0, 1, 2 | 0, 1].
  auto y = RunPad({{3}, {2, 2}, "wrap"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>(*y), std::vector<float>({1, 2, 0, 1, 2, 0, 1}));
}

TEST(PadTest, WrapLongerThanTheAxisKeepsWrapping) {
  // numpy.pad([0, 1, 2], (4, 5), 'wrap').
  auto y = RunPad({{3}, {4, 5}, "wrap"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>(*y), std::vector<float>({2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1}));
}

TEST(PadTest, WrapAroundTheCroppedRegion) {
  // Crop 1 at the front of [0, 1, 2], then wrap 2 at the back over [1, 2].
  auto y = RunPad({{3}, {-1, 2}, "wrap"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>(*y), std::vector<float>({1, 2, 1, 2}));
}

TEST(PadTest, WrapTwoAxes) {
  // [[0,1,2],[3,4,5]] with pads (1, 2, 3, 1): rows wrap 1 before and 3
  // after, columns 2 before and 1 after.
  auto y = RunPad({{2, 3}, {1, 2, 3, 1}, "wrap"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({6, 6}));
  const std::vector<float> odd = {4, 5, 3, 4, 5, 3}, even = {1, 2, 0, 1, 2, 0};
  std::vector<float> expected;
  for (int r = 0; r < 6; ++r) expected.insert(expected.end(), (r % 2 ? even : odd).begin(), (r % 2 ? even : odd).end());
  EXPECT_EQ(Values<float>(*y), expected);
}

TEST(PadTest, AxesInputPadsOnlyThoseAxes) {
  // Axis -1 of [[0,1,2],[3,4,5]] gets 1 before and 2 after, filled with 9.
  auto y = RunPad({{2, 3}, {1, 2}, "constant", {-1}, 18, 9});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({2, 6}));
  EXPECT_EQ(Values<float>(*y), std::vector<float>({9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9, 9}));
}

TEST(PadTest, AxesInputInAnyOrder) {
  // axes (1, 0), pads (1, 0, 0, 1): one column before, one row after.
  auto y = RunPad({{2, 3}, {1, 0, 0, 1}, "constant", {1, 0}, 18});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({3, 4}));
  EXPECT_EQ(Values<float>(*y), std::vector<float>({0, 0, 1, 2, 0, 3, 4, 5, 0, 0, 0, 0}));
}

TEST(PadTest, BadAxesAreRefused) {
  for (const auto& [axes, message] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{1, 1}, "more than once"}, {{2, 0}, "out of range"}}) {
    auto y = RunPad({{2, 3}, {1, 0, 0, 1}, "constant", axes, 18});
    ASSERT_FALSE(y.ok()) << message;
    EXPECT_NE(y.status().message().find(message), std::string::npos) << y.status();
  }
}

TEST(PadTest, Opset23ResolvesToPad19) {
  auto y = RunPad({{3}, {1, 1}, "wrap", {0}, 23});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>(*y), std::vector<float>({2, 0, 1, 2, 0}));
}

}  // namespace
}  // namespace onyx
