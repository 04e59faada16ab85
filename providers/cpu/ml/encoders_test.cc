// Encoders, LabelEncoder and the feature ops through a session. Expected
// values are worked out by hand (comments) or recorded from ONNX Runtime 1.30
// on the same models (duplicate keys, NaN keys, defaults).
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/ml/ml_test_util.h"

namespace onyx {
namespace {

using testing::ExpectNear;
using testing::FloatsAttr;
using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::MlModel;
using testing::RunModel;
using testing::StringAttr;
using testing::StringsAttr;
using testing::StringTensor;
using testing::TensorAttr;
using testing::Values;

// [["a", "b"], ["z", "c"]]
Tensor Letters() { return StringTensor({2, 2}, {"a", "b", "z", "c"}); }

std::vector<std::string> Strings(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.num_elements());
}

TEST(EncoderTest, OneHotEncoderAddsACategoryAxis) {
  auto m = MlModel("OneHotEncoder", 1, {{"x", DataType::kString, {2, 2}}}, {{"y", DataType::kFloat, {2, 2, 3}}},
                   {StringsAttr("cats_strings", {"a", "b", "c"})});
  auto out = RunModel(m, {{"x", Value(Letters())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().dims(), (Dims{2, 2, 3}));
  ExpectNear(Values<float>((*out)[0]), {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1});  // "z" is no category
  *m.proto().mutable_graph()->mutable_node(0)->add_attribute() = IntAttr("zeros", 0);
  EXPECT_FALSE(RunModel(m, {{"x", Value(Letters())}}, {"y"}).ok());
  // Numbers are truncated: 1.7 -> 1, -0.5 -> 0; categories [3, 1, 0].
  auto f = MlModel("OneHotEncoder", 1, {{"x", DataType::kFloat, {3}}}, {{"y", DataType::kFloat, {3, 3}}},
                   {IntsAttr("cats_int64s", {3, 1, 0})});
  out = RunModel(f, {{"x", Value(FloatTensor({3}, {1.7f, 5.0f, -0.5f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {0, 1, 0, 0, 0, 0, 0, 0, 1});
}

TEST(EncoderTest, CategoryMapperLastDuplicateWins) {
  auto m = MlModel(
      "CategoryMapper", 1, {{"x", DataType::kString, {2, 2}}}, {{"y", DataType::kInt64, {2, 2}}},
      {StringsAttr("cats_strings", {"a", "b", "a"}), IntsAttr("cats_int64s", {1, 2, 3}), IntAttr("default_int64", -9)});
  auto out = RunModel(m, {{"x", Value(Letters())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{3, 2, -9, -9}));
}

TEST(LabelEncoderTest, Version1MapsStringsToTheirLastIndex) {
  auto m = MlModel("LabelEncoder", 1, {{"x", DataType::kString, {2, 2}}}, {{"y", DataType::kInt64, {2, 2}}},
                   {StringsAttr("classes_strings", {"b", "a", "b"}), IntAttr("default_int64", -7)});
  auto out = RunModel(m, {{"x", Value(Letters())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 2, -7, -7}));
}

TEST(LabelEncoderTest, Version2FirstDuplicateWinsAndNanNeverMatches) {
  auto m = MlModel("LabelEncoder", 2, {{"x", DataType::kString, {2, 2}}}, {{"y", DataType::kInt64, {2, 2}}},
                   {StringsAttr("keys_strings", {"a", "b", "a"}), IntsAttr("values_int64s", {1, 2, 3})});
  auto out = RunModel(m, {{"x", Value(Letters())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 2, -1, -1}));
  for (int64_t version : {2, 4}) {
    auto f = MlModel("LabelEncoder", version, {{"x", DataType::kFloat, {3}}}, {{"y", DataType::kString, {3}}},
                     {FloatsAttr("keys_floats", {0.5f, NAN}), StringsAttr("values_strings", {"x", "n"})});
    out = RunModel(f, {{"x", Value(FloatTensor({3}, {0.5f, NAN, 2.0f}))}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    // Version 4 matches a NaN key; version 2 falls back to the default.
    EXPECT_EQ(Strings((*out)[0]), (std::vector<std::string>{"x", version == 4 ? "n" : "_Unused", "_Unused"}));
  }
}

TEST(LabelEncoderTest, Version4TensorKeysValuesAndDefault) {
  auto m = MlModel("LabelEncoder", 4, {{"x", DataType::kInt32, {3}}}, {{"y", DataType::kDouble, {3}}},
                   {TensorAttr<int>("keys_tensor", onnx::TensorProto::INT32, {1, 3}),
                    TensorAttr<double>("values_tensor", onnx::TensorProto::DOUBLE, {1.5, 3.5}),
                    TensorAttr<double>("default_tensor", onnx::TensorProto::DOUBLE, {-4.0})});
  Tensor x = Tensor::Allocate(DataType::kInt32, {3});
  for (int i = 0; i < 3; ++i) x.mutable_data<int32_t>()[i] = i + 1;
  auto out = RunModel(m, {{"x", Value(x)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<double>((*out)[0]), (std::vector<double>{1.5, -4.0, 3.5}));
}

TEST(FeatureTest, ArrayFeatureExtractorSelectsOnTheLastAxis) {
  // X = arange(12) as [2, 2, 3]; indices [[1], [0]] flatten to [1, 0].
  std::vector<int64_t> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i;
  auto m = MlModel("ArrayFeatureExtractor", 1, {{"x", DataType::kInt64, {2, 2, 3}}, {"i", DataType::kInt64, {2, 1}}},
                   {{"z", DataType::kInt64, {2, 2, 2}}}, {});
  auto out =
      RunModel(m, {{"x", Value(Int64Tensor({2, 2, 3}, values))}, {"i", Value(Int64Tensor({2, 1}, {1, 0}))}}, {"z"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 0, 4, 3, 7, 6, 10, 9}));
  out = RunModel(m, {{"x", Value(Int64Tensor({2, 2, 3}, values))}, {"i", Value(Int64Tensor({2, 1}, {3, 0}))}}, {"z"});
  EXPECT_FALSE(out.ok());
}

TEST(FeatureTest, FeatureVectorizerPadsEachInputToItsWidth) {
  // Widths [3, 2]: [1, 2, 0 | 5, 0] and [3, 4, 0 | 6, 0].
  auto m = MlModel("FeatureVectorizer", 1, {{"a", DataType::kFloat, {2, 2}}, {"b", DataType::kFloat, {2, 1}}},
                   {{"y", DataType::kFloat, {2, 5}}}, {IntsAttr("inputdimensions", {3, 2})});
  auto out =
      RunModel(m, {{"a", Value(FloatTensor({2, 2}, {1, 2, 3, 4}))}, {"b", Value(FloatTensor({2, 1}, {5, 6}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {1, 2, 0, 5, 0, 3, 4, 0, 6, 0});
}

}  // namespace
}  // namespace onyx
