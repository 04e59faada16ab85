#include "server/scheduling/batch_util.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scheduling/test_util.h"

namespace onyx::server {
namespace {

using ::testing::ElementsAre;
using testing::FloatTensor;
using testing::FloatValues;
using ::testing::HasSubstr;

TEST(BatchUtilTest, ChoosesTheSmallestBucketThatFits) {
  const std::vector<int64_t> buckets = {1, 2, 4, 8};
  EXPECT_EQ(ChooseBucket(buckets, 1).value(), 0u);
  EXPECT_EQ(ChooseBucket(buckets, 2).value(), 1u);
  EXPECT_EQ(ChooseBucket(buckets, 3).value(), 2u);
  EXPECT_EQ(ChooseBucket(buckets, 4).value(), 2u);
  EXPECT_EQ(ChooseBucket(buckets, 5).value(), 3u);
  EXPECT_EQ(ChooseBucket(buckets, 8).value(), 3u);
  const std::vector<int64_t> sparse = {3, 10};
  EXPECT_EQ(ChooseBucket(sparse, 1).value(), 0u);
  EXPECT_EQ(ChooseBucket(sparse, 4).value(), 1u);
}

TEST(BatchUtilTest, BatchOutsideTheBucketsIsInvalid) {
  const std::vector<int64_t> buckets = {1, 2, 4, 8};
  absl::StatusOr<size_t> too_big = ChooseBucket(buckets, 9);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.status().message(), HasSubstr("batch size 9"));
  EXPECT_FALSE(ChooseBucket(buckets, 0).ok());
  EXPECT_FALSE(ChooseBucket({}, 1).ok());
}

TEST(BatchUtilTest, PadsWithZeroRows) {
  const onyx::Tensor x = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<onyx::Tensor> padded = ConcatAndPad({x}, 4);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_THAT(padded->dims(), ElementsAre(4, 3));
  EXPECT_THAT(FloatValues(*padded), ElementsAre(1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0));
}

TEST(BatchUtilTest, FullBatchIsPassedThroughWithoutCopy) {
  const onyx::Tensor x = FloatTensor({2, 2}, {1, 2, 3, 4});
  absl::StatusOr<onyx::Tensor> same = ConcatAndPad({x}, 2);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->raw(), x.raw());
}

TEST(BatchUtilTest, ConcatenatesParts) {
  const onyx::Tensor a = FloatTensor({1, 2}, {1, 2});
  const onyx::Tensor b = FloatTensor({2, 2}, {3, 4, 5, 6});
  absl::StatusOr<onyx::Tensor> joined = ConcatAndPad({a, b}, 4);
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_THAT(joined->dims(), ElementsAre(4, 2));
  EXPECT_THAT(FloatValues(*joined), ElementsAre(1, 2, 3, 4, 5, 6, 0, 0));
}

TEST(BatchUtilTest, ConcatRejectsMismatchedOrOversizedParts) {
  const onyx::Tensor a = FloatTensor({1, 2}, {1, 2});
  const onyx::Tensor b = FloatTensor({1, 3}, {1, 2, 3});
  EXPECT_FALSE(ConcatAndPad({a, b}, 4).ok());
  EXPECT_FALSE(ConcatAndPad({a, a, a}, 2).ok());
  const onyx::Tensor ints = onyx::Tensor::Allocate(onyx::DataType::kInt32, {1, 2});
  EXPECT_FALSE(ConcatAndPad({a, ints}, 2).ok());
  const onyx::Tensor scalar = onyx::Tensor::Allocate(onyx::DataType::kFloat, {});
  EXPECT_FALSE(ConcatAndPad({scalar}, 1).ok());
}

TEST(BatchUtilTest, PadsStringTensorsWithEmptyStrings) {
  onyx::Tensor s = onyx::Tensor::Allocate(onyx::DataType::kString, {1, 2});
  s.mutable_data<std::string>()[0] = "a";
  s.mutable_data<std::string>()[1] = "bc";
  absl::StatusOr<onyx::Tensor> padded = ConcatAndPad({s}, 2);
  ASSERT_TRUE(padded.ok());
  const std::string* v = padded->data<std::string>();
  EXPECT_THAT(std::vector<std::string>(v, v + 4), ElementsAre("a", "bc", "", ""));
  absl::StatusOr<onyx::Tensor> row = SliceRows(*padded, 0, 1);
  ASSERT_TRUE(row.ok());
  EXPECT_THAT(std::vector<std::string>(row->data<std::string>(), row->data<std::string>() + 2),
              ElementsAre("a", "bc"));
}

TEST(BatchUtilTest, SlicesRows) {
  const onyx::Tensor y = FloatTensor({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  absl::StatusOr<onyx::Tensor> head = SliceRows(y, 0, 3);
  ASSERT_TRUE(head.ok());
  EXPECT_THAT(head->dims(), ElementsAre(3, 2));
  EXPECT_THAT(FloatValues(*head), ElementsAre(1, 2, 3, 4, 5, 6));
  absl::StatusOr<onyx::Tensor> middle = SliceRows(y, 1, 2);
  ASSERT_TRUE(middle.ok());
  EXPECT_THAT(FloatValues(*middle), ElementsAre(3, 4, 5, 6));
  absl::StatusOr<onyx::Tensor> all = SliceRows(y, 0, 4);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->raw(), y.raw());
  EXPECT_FALSE(SliceRows(y, 3, 2).ok());
  EXPECT_FALSE(SliceRows(y, -1, 1).ok());
}

TEST(BatchUtilTest, PadsAMiddleAxisWithThePadValue) {
  // [2, 2, 3] padded along axis 1 to 3: each [2, 3] block gets a row of -1.
  const onyx::Tensor x = FloatTensor({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  absl::StatusOr<onyx::Tensor> padded = PadAxis(x, 1, 3, -1.0);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_THAT(padded->dims(), ElementsAre(2, 3, 3));
  EXPECT_THAT(FloatValues(*padded), ElementsAre(1, 2, 3, 4, 5, 6, -1, -1, -1,  //
                                                7, 8, 9, 10, 11, 12, -1, -1, -1));
  // Back to the true length: the original values, nothing else.
  absl::StatusOr<onyx::Tensor> sliced = SliceAxis(*padded, 1, 2);
  ASSERT_TRUE(sliced.ok()) << sliced.status();
  EXPECT_THAT(sliced->dims(), ElementsAre(2, 2, 3));
  EXPECT_THAT(FloatValues(*sliced), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
}

TEST(BatchUtilTest, PadsTheLastAxisOfIntegersAndStrings) {
  onyx::Tensor ids = onyx::Tensor::Allocate(onyx::DataType::kInt64, {2, 2});
  for (int64_t i = 0; i < 4; ++i) ids.mutable_data<int64_t>()[i] = i + 1;
  absl::StatusOr<onyx::Tensor> padded = PadAxis(ids, 1, 4, 7.0);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_THAT(std::vector<int64_t>(padded->data<int64_t>(), padded->data<int64_t>() + 8),
              ElementsAre(1, 2, 7, 7, 3, 4, 7, 7));
  absl::StatusOr<onyx::Tensor> cut = SliceAxis(*padded, 1, 1);
  ASSERT_TRUE(cut.ok());
  EXPECT_THAT(std::vector<int64_t>(cut->data<int64_t>(), cut->data<int64_t>() + 2),
              ElementsAre(1, 3));

  onyx::Tensor words = onyx::Tensor::Allocate(onyx::DataType::kString, {1, 2});
  words.mutable_data<std::string>()[0] = "a";
  words.mutable_data<std::string>()[1] = "b";
  absl::StatusOr<onyx::Tensor> padded_words = PadAxis(words, 1, 3, 0);
  ASSERT_TRUE(padded_words.ok());
  const std::string* w = padded_words->data<std::string>();
  EXPECT_THAT(std::vector<std::string>(w, w + 3), ElementsAre("a", "b", ""));
}

TEST(BatchUtilTest, PadAndSliceRefuseOutOfRange) {
  const onyx::Tensor x = FloatTensor({1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(PadAxis(x, 1, 3, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PadAxis(x, 2, 8, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SliceAxis(x, 1, 5).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<onyx::Tensor> same = PadAxis(x, 1, 4, 0);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->raw(), x.raw());  // already the size: shared, not copied
}

}  // namespace
}  // namespace onyx::server
