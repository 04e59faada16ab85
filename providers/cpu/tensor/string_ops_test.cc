// StringConcat, StringSplit and RegexFullMatch (opset 20) through a session.
// Expected values are ONNX Runtime 1.30's on the same inputs, including where
// it departs from Python's str.split (noted at each case).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

Tensor Strings(const std::vector<int64_t>& dims, const std::vector<std::string>& values) {
  Tensor t = Tensor::Allocate(DataType::kString, dims);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<std::string>()[i] = values[i];
  return t;
}

struct Split {
  std::vector<int64_t> dims;
  std::vector<std::string> parts;
  std::vector<int64_t> counts;
};

Split RunSplit(const Tensor& x, const std::string& delimiter, int64_t maxsplit) {
  ModelBuilder m(20);
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
  std::vector<int64_t> y_dims(dims.size() + 1, -1);
  m.Input("x", DataType::kString, dims).Output("y", DataType::kString, y_dims).Output("z", DataType::kInt64, dims);
  auto& n = m.Node("StringSplit", {"x"}, {"y", "z"}, "split");
  if (!delimiter.empty()) n.add_attribute()->CopyFrom(StringAttr("delimiter", delimiter));
  if (maxsplit >= 0) n.add_attribute()->CopyFrom(IntAttr("maxsplit", maxsplit));
  auto out = RunModel(m, {{"x", Value(x)}}, {"y", "z"});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0].tensor();
  return {std::vector<int64_t>(y.dims().begin(), y.dims().end()), Values<std::string>((*out)[0]),
          Values<int64_t>((*out)[1])};
}

TEST(StringOpsTest, ConcatBroadcasts) {
  ModelBuilder m(20);
  m.Input("a", DataType::kString, {2, 1}).Input("b", DataType::kString, {3}).Output("z", DataType::kString, {2, 3});
  m.Node("StringConcat", {"a", "b"}, {"z"}, "concat");
  auto out =
      RunModel(m, {{"a", Value(Strings({2, 1}, {"a", "b"}))}, {"b", Value(Strings({3}, {"x", "yy", ""}))}}, {"z"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().dims(), (Dims{2, 3}));
  EXPECT_EQ(Values<std::string>((*out)[0]), (std::vector<std::string>{"ax", "ayy", "a", "bx", "byy", "b"}));
}

TEST(StringOpsTest, SplitOnADelimiterKeepsEmptyParts) {
  // Python would give "" one part; ONNX Runtime gives it none.
  Split s = RunSplit(Strings({4}, {"a,b,,c", "", ",", "no"}), ",", -1);
  EXPECT_EQ(s.dims, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(s.parts, (std::vector<std::string>{"a", "b", "", "c", "", "", "", "", "", "", "", "", "no", "", "", ""}));
  EXPECT_EQ(s.counts, (std::vector<int64_t>{4, 0, 2, 1}));
}

TEST(StringOpsTest, SplitStopsAfterMaxsplit) {
  Split s = RunSplit(Strings({3}, {"a,,", "a::b:::c", "x"}), ",", 1);
  EXPECT_EQ(s.parts, (std::vector<std::string>{"a", ",", "a::b:::c", "", "x", ""}));
  EXPECT_EQ(s.counts, (std::vector<int64_t>{2, 1, 1}));
  Split multi = RunSplit(Strings({1}, {"a::b:::c"}), "::", -1);
  EXPECT_EQ(multi.parts, (std::vector<std::string>{"a", "b", ":c"}));
}

TEST(StringOpsTest, SplitOnSpacesTrimsTheEnds) {
  // Only spaces separate: "a\tb" stays whole. With maxsplit the remainder is
  // trimmed too ("b  c", where Python keeps "b  c  ").
  Split s = RunSplit(Strings({2, 2}, {"  hello  world ", "", "a\tb", "a  b  c  "}), "", -1);
  EXPECT_EQ(s.dims, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(s.parts, (std::vector<std::string>{"hello", "world", "", "", "", "", "a\tb", "", "", "a", "b", "c"}));
  EXPECT_EQ(s.counts, (std::vector<int64_t>{2, 0, 1, 3}));
  Split limited = RunSplit(Strings({1}, {"a  b  c  "}), "", 1);
  EXPECT_EQ(limited.parts, (std::vector<std::string>{"a", "b  c"}));
}

TEST(StringOpsTest, SplitOfOnlyEmptyStringsHasAnEmptyLastAxis) {
  Split s = RunSplit(Strings({2}, {"", "   "}), "", -1);
  EXPECT_EQ(s.dims, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(s.counts, (std::vector<int64_t>{0, 0}));
}

TEST(StringOpsTest, RegexFullMatchUsesRe2) {
  ModelBuilder m(20);
  m.Input("x", DataType::kString, {4}).Output("y", DataType::kBool, {4});
  m.Node("RegexFullMatch", {"x"}, {"y"}, "re")
      .add_attribute()
      ->CopyFrom(StringAttr("pattern", R"(www\.[\w.-]+\.\bcom\b)"));
  Tensor x = Strings({4}, {"www.google.com", "www.facebook.com", "www.bbc.co.uk", "xwww.google.com"});
  auto out = RunModel(m, {{"x", Value(x)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<bool>((*out)[0]), (std::vector<bool>{true, true, false, false}));
}

TEST(StringOpsTest, RegexFullMatchRefusesABadPatternAtLoad) {
  // Backreferences are not RE2.
  ModelBuilder m(20);
  m.Input("x", DataType::kString, {1}).Output("y", DataType::kBool, {1});
  m.Node("RegexFullMatch", {"x"}, {"y"}, "re").add_attribute()->CopyFrom(StringAttr("pattern", R"((a)\1)"));
  auto out = RunModel(m, {{"x", Value(Strings({1}, {"aa"}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("not a valid RE2 expression"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
