#include "server/scheduling/bucket_runner.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scheduling/test_util.h"

namespace onyx::server {
namespace {

using ::testing::ElementsAre;
using testing::FakeModel;
using testing::FloatTensor;
using testing::FloatValues;
using ::testing::HasSubstr;

// y = 10 * x row by row, plus a per-row sum output "s" of shape [B, 1].
absl::StatusOr<std::vector<onyx::Value>> TimesTenAndRowSum(
    size_t, const onyx::Feeds& feeds, const std::vector<std::string>& outputs) {
  const onyx::Tensor& x = feeds.at(0).second.tensor();
  const int64_t rows = x.dims()[0], cols = x.dims()[1];
  onyx::Tensor y = onyx::Tensor::Allocate(onyx::DataType::kFloat, x.dims());
  onyx::Tensor s = onyx::Tensor::Allocate(onyx::DataType::kFloat, {rows, 1});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      y.mutable_data<float>()[r * cols + c] = 10 * x.data<float>()[r * cols + c];
      s.mutable_data<float>()[r] += x.data<float>()[r * cols + c];
    }
  }
  std::vector<onyx::Value> result;
  for (const std::string& name : outputs) result.emplace_back(name == "y" ? y : s);
  return result;
}

std::unique_ptr<InferenceRequest> Request(onyx::Tensor x, int64_t batch,
                                          std::vector<std::string> outputs) {
  auto request = std::make_unique<InferenceRequest>();
  request->inputs.emplace_back("x", onyx::Value(std::move(x)));
  request->batch_size = batch;
  request->output_names = std::move(outputs);
  return request;
}

TEST(BucketRunnerTest, RunsOnTheSmallestBucketPaddedThenSlicesBack) {
  FakeModel model({1, 2, 4, 8}, TimesTenAndRowSum);
  auto request = Request(FloatTensor({3, 2}, {1, 2, 3, 4, 5, 6}), 3, {"y", "s"});
  absl::StatusOr<InferenceResult> result = RunOnBucket(model, *request);
  ASSERT_TRUE(result.ok()) << result.status();

  // Batch 3 runs on bucket 4 (index 2) with one zero row appended.
  // calls() returns a copy: references into it must not outlive the copy.
  const std::vector<FakeModel::Call> calls = model.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].bucket_index, 2u);
  const onyx::Tensor& fed = calls[0].feeds.at(0).second.tensor();
  EXPECT_THAT(fed.dims(), ElementsAre(4, 2));
  EXPECT_THAT(FloatValues(fed), ElementsAre(1, 2, 3, 4, 5, 6, 0, 0));

  // Outputs come back with 3 rows, in the requested order.
  ASSERT_EQ(result->outputs.size(), 2u);
  EXPECT_THAT(result->outputs[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(FloatValues(result->outputs[0]), ElementsAre(10, 20, 30, 40, 50, 60));
  EXPECT_THAT(result->outputs[1].dims(), ElementsAre(3, 1));
  EXPECT_THAT(FloatValues(result->outputs[1]), ElementsAre(3, 7, 11));
}

TEST(BucketRunnerTest, ExactBucketIsNotPadded) {
  FakeModel model({1, 2, 4}, TimesTenAndRowSum);
  auto request = Request(FloatTensor({2, 1}, {7, 8}), 2, {"s"});
  absl::StatusOr<InferenceResult> result = RunOnBucket(model, *request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(model.calls()[0].bucket_index, 1u);
  EXPECT_THAT(model.calls()[0].feeds.at(0).second.tensor().dims(), ElementsAre(2, 1));
  EXPECT_THAT(FloatValues(result->outputs[0]), ElementsAre(7, 8));
}

TEST(BucketRunnerTest, UnbatchedModelRunsAsGiven) {
  FakeModel model({}, TimesTenAndRowSum);
  auto request = Request(FloatTensor({3, 1}, {1, 2, 3}), 0, {"y"});
  absl::StatusOr<InferenceResult> result = RunOnBucket(model, *request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(model.calls()[0].bucket_index, 0u);
  EXPECT_THAT(FloatValues(result->outputs[0]), ElementsAre(10, 20, 30));
}

TEST(BucketRunnerTest, BatchLargerThanEveryBucketIsInvalid) {
  FakeModel model({1, 2}, TimesTenAndRowSum);
  auto request = Request(FloatTensor({3, 1}, {1, 2, 3}), 3, {"y"});
  absl::StatusOr<InferenceResult> result = RunOnBucket(model, *request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(model.calls().empty());
}

TEST(BucketRunnerTest, InputRowsMustMatchTheBatchSize) {
  FakeModel model({1, 2, 4}, TimesTenAndRowSum);
  auto request = Request(FloatTensor({3, 1}, {1, 2, 3}), 2, {"y"});
  absl::StatusOr<InferenceResult> result = RunOnBucket(model, *request);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("input 'x'"));
}

TEST(BucketRunnerTest, OutputWithoutTheBatchDimensionIsInternal) {
  FakeModel model({1, 2, 4},
                  [](size_t, const onyx::Feeds&,
                     const std::vector<std::string>&) -> absl::StatusOr<std::vector<onyx::Value>> {
                    return std::vector<onyx::Value>{onyx::Value(FloatTensor({1}, {0}))};
                  });
  auto request = Request(FloatTensor({3, 1}, {1, 2, 3}), 3, {"y"});
  absl::StatusOr<InferenceResult> result = RunOnBucket(model, *request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("output 'y'"));
}

TEST(BucketRunnerTest, ModelErrorsPassThrough) {
  FakeModel model({1},
                  [](size_t, const onyx::Feeds&,
                     const std::vector<std::string>&) -> absl::StatusOr<std::vector<onyx::Value>> {
                    return absl::InternalError("kernel exploded");
                  });
  auto request = Request(FloatTensor({1, 1}, {1}), 1, {"y"});
  absl::StatusOr<InferenceResult> result = RunOnBucket(model, *request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "kernel exploded");
}

TEST(BucketRunnerTest, CanShareBatchNeedsSameInputsTypesTrailingDimsAndOutputs) {
  auto base = Request(FloatTensor({1, 2}, {1, 2}), 1, {"y"});
  EXPECT_TRUE(CanShareBatch(*base, *Request(FloatTensor({3, 2}, {1, 2, 3, 4, 5, 6}), 3, {"y"})));
  EXPECT_FALSE(CanShareBatch(*base, *Request(FloatTensor({1, 3}, {1, 2, 3}), 1, {"y"})));
  EXPECT_FALSE(CanShareBatch(*base, *Request(FloatTensor({1, 2, 1}, {1, 2}), 1, {"y"})));
  EXPECT_FALSE(CanShareBatch(*base, *Request(FloatTensor({1, 2}, {1, 2}), 1, {"s"})));
  EXPECT_FALSE(CanShareBatch(*base, *Request(FloatTensor({1, 2}, {1, 2}), 1, {"y", "s"})));
  auto ints = Request(onyx::Tensor::Allocate(onyx::DataType::kInt32, {1, 2}), 1, {"y"});
  EXPECT_FALSE(CanShareBatch(*base, *ints));
  auto renamed = Request(FloatTensor({1, 2}, {1, 2}), 1, {"y"});
  renamed->inputs[0].first = "other";
  EXPECT_FALSE(CanShareBatch(*base, *renamed));
  auto unbatched = Request(FloatTensor({1, 2}, {1, 2}), 0, {"y"});
  EXPECT_FALSE(CanShareBatch(*base, *unbatched));
}

TEST(BucketRunnerTest, RunBatchStacksRequestsAndReturnsEachItsOwnRows) {
  FakeModel model({1, 2, 4, 8}, TimesTenAndRowSum);
  auto a = Request(FloatTensor({2, 2}, {1, 2, 3, 4}), 2, {"s", "y"});
  auto b = Request(FloatTensor({1, 2}, {5, 6}), 1, {"s", "y"});
  const InferenceRequest* both[] = {a.get(), b.get()};
  absl::StatusOr<std::vector<InferenceResult>> results = RunBatchOnBucket(model, both);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(model.calls().size(), 1u);
  EXPECT_EQ(model.calls()[0].bucket_index, 2u);  // 3 rows -> bucket 4
  EXPECT_THAT(FloatValues(model.calls()[0].feeds.at(0).second.tensor()),
              ElementsAre(1, 2, 3, 4, 5, 6, 0, 0));
  ASSERT_EQ(results->size(), 2u);
  EXPECT_THAT(FloatValues((*results)[0].outputs[0]), ElementsAre(3, 7));
  EXPECT_THAT(FloatValues((*results)[0].outputs[1]), ElementsAre(10, 20, 30, 40));
  EXPECT_THAT((*results)[1].outputs[1].dims(), ElementsAre(1, 2));
  EXPECT_THAT(FloatValues((*results)[1].outputs[0]), ElementsAre(11));
  EXPECT_THAT(FloatValues((*results)[1].outputs[1]), ElementsAre(50, 60));
}

// y = 10 * x elementwise over [B, S]; the fake's sequence dim "seq" is axis 1
// of input x (padded with -1) and of output y (sliced back).
absl::StatusOr<std::vector<onyx::Value>> TimesTen(size_t, const onyx::Feeds& feeds,
                                                  const std::vector<std::string>&) {
  const onyx::Tensor& x = feeds.at(0).second.tensor();
  onyx::Tensor y = onyx::Tensor::Allocate(onyx::DataType::kFloat, x.dims());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    y.mutable_data<float>()[i] = 10 * x.data<float>()[i];
  }
  std::vector<onyx::Value> result;
  result.emplace_back(std::move(y));
  return result;
}

std::unique_ptr<FakeModel> SequenceModel() {
  auto model = std::make_unique<FakeModel>(std::vector<int64_t>{1, 2}, TimesTen);
  PaddedDim seq;
  seq.name = "seq";
  seq.sizes = {4, 8};
  seq.inputs = {PaddedDim::Use{"x", 1, -1.0}};
  seq.outputs = {PaddedDim::Use{"y", 1, 0}};
  model->set_padded_dims({seq});
  return model;
}

TEST(BucketRunnerTest, PadsEachRequestToTheSmallestSizeAndSlicesOutputsBack) {
  std::unique_ptr<FakeModel> model = SequenceModel();
  auto a = Request(FloatTensor({1, 3}, {1, 2, 3}), 1, {"y"});
  auto b = Request(FloatTensor({1, 2}, {4, 5}), 1, {"y"});
  EXPECT_TRUE(CanShareBatch(*model, *a, *b));  // both pad to 4
  const InferenceRequest* both[] = {a.get(), b.get()};
  absl::StatusOr<std::vector<InferenceResult>> results = RunBatchOnBucket(*model, both);
  ASSERT_TRUE(results.ok()) << results.status();
  // calls() returns a copy: references into it must not outlive the copy.
  const std::vector<FakeModel::Call> calls = model->calls();
  ASSERT_EQ(calls.size(), 1u);
  // Batch bucket 2 (index 1) x size 4 (index 0): session 1 * 2 + 0.
  EXPECT_EQ(calls[0].bucket_index, 2u);
  const onyx::Tensor& fed = calls[0].feeds.at(0).second.tensor();
  EXPECT_THAT(fed.dims(), ElementsAre(2, 4));
  EXPECT_THAT(FloatValues(fed), ElementsAre(1, 2, 3, -1, 4, 5, -1, -1));
  ASSERT_EQ(results->size(), 2u);
  EXPECT_THAT((*results)[0].outputs[0].dims(), ElementsAre(1, 3));
  EXPECT_THAT(FloatValues((*results)[0].outputs[0]), ElementsAre(10, 20, 30));
  EXPECT_THAT((*results)[1].outputs[0].dims(), ElementsAre(1, 2));
  EXPECT_THAT(FloatValues((*results)[1].outputs[0]), ElementsAre(40, 50));
}

TEST(BucketRunnerTest, OnlyRequestsPaddedToTheSameSizeShareABatch) {
  std::unique_ptr<FakeModel> model = SequenceModel();
  auto short_one = Request(FloatTensor({1, 3}, {1, 2, 3}), 1, {"y"});
  auto long_one = Request(FloatTensor({1, 5}, {1, 2, 3, 4, 5}), 1, {"y"});
  EXPECT_FALSE(CanShareBatch(*model, *short_one, *long_one));  // 4 vs 8
  EXPECT_FALSE(CanShareBatch(*short_one, *long_one));          // without padding: dims differ
  const InferenceRequest* mixed[] = {short_one.get(), long_one.get()};
  EXPECT_EQ(RunBatchOnBucket(*model, mixed).status().code(), absl::StatusCode::kInvalidArgument);

  absl::StatusOr<InferenceResult> alone = RunOnBucket(*model, *long_one);
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(model->calls().back().bucket_index, 1u);  // bucket 1 x size 8
  EXPECT_THAT(FloatValues(model->calls().back().feeds.at(0).second.tensor()),
              ElementsAre(1, 2, 3, 4, 5, -1, -1, -1));
  EXPECT_THAT(FloatValues(alone->outputs[0]), ElementsAre(10, 20, 30, 40, 50));
}

TEST(BucketRunnerTest, RequestLongerThanTheLargestSizeNamesInputDimAndLimit) {
  std::unique_ptr<FakeModel> model = SequenceModel();
  auto too_long = Request(FloatTensor({1, 9}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), 1, {"y"});
  absl::StatusOr<std::vector<size_t>> sizes = PaddedSizeIndexes(*model, *too_long);
  EXPECT_EQ(sizes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sizes.status().message(), HasSubstr("input 'x'"));
  EXPECT_THAT(sizes.status().message(), HasSubstr("'seq'"));
  EXPECT_THAT(sizes.status().message(), HasSubstr("largest padded size 8"));
  EXPECT_EQ(RunOnBucket(*model, *too_long).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(model->calls().empty());
}

}  // namespace
}  // namespace onyx::server
