// OptionalHasElement-18 and OptionalGetElement-18 on plain tensors and on an
// omitted input, which version 18 accepts.
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

TEST(OptionalTest, PlainTensorHasItsElementAndIsItsOwnElement) {
  ModelBuilder m(18);
  m.Input("x", DataType::kFloat, {2}).Output("has", DataType::kBool, {}).Output("y", DataType::kFloat, {2});
  m.Node("OptionalHasElement", {"x"}, {"has"}, "has");
  m.Node("OptionalGetElement", {"x"}, {"y"}, "get");
  auto out = RunModel(m, {{"x", Value(FloatTensor({2}, {1.5f, -2}))}}, {"has", "y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<bool>((*out)[0]), (std::vector<bool>{true}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1.5f, -2}));
}

TEST(OptionalTest, OmittedInputHasNoElement) {
  ModelBuilder m(18);
  m.Input("x", DataType::kFloat, {1}).Output("has", DataType::kBool, {});
  m.Node("OptionalHasElement", {}, {"has"}, "has");
  auto out = RunModel(m, {{"x", Value(FloatTensor({1}, {0}))}}, {"has"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<bool>((*out)[0]), (std::vector<bool>{false}));
}

}  // namespace
}  // namespace onyx
