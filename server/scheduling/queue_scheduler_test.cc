#include "server/scheduling/queue_scheduler.h"

#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
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

// A model whose runs block until Release(); counts runs in progress.
class GatedModel {
 public:
  explicit GatedModel(std::vector<int64_t> buckets)
      : model_(std::make_shared<FakeModel>(
            std::move(buckets),
            [this](size_t, const onyx::Feeds& feeds,
                   const std::vector<std::string>&) -> absl::StatusOr<std::vector<onyx::Value>> {
              {
                absl::MutexLock lock(&mu_);
                ++running_;
                max_running_ = std::max(max_running_, running_);
                mu_.Await(absl::Condition(&released_));
                --running_;
              }
              // Echo the input back as output "y".
              return std::vector<onyx::Value>{feeds.at(0).second};
            })) {}

  std::shared_ptr<FakeModel> model() const { return model_; }
  void Release() {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }
  // Waits (bounded) until `n` runs are blocked inside the model.
  bool AwaitRunning(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }
  int max_running() {
    absl::MutexLock lock(&mu_);
    return max_running_;
  }

 private:
  absl::Mutex mu_;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int max_running_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<FakeModel> model_;
};

std::unique_ptr<InferenceRequest> OneRow(float value) {
  auto request = std::make_unique<InferenceRequest>();
  request->inputs.emplace_back("x", onyx::Value(FloatTensor({1, 1}, {value})));
  request->batch_size = 1;
  request->output_names = {"y"};
  return request;
}

// Collects callback outcomes from worker threads.
class Results {
 public:
  DoneCallback Callback() {
    return [this](absl::StatusOr<InferenceResult> result) {
      absl::MutexLock lock(&mu_);
      if (result.ok()) {
        values_.push_back(FloatValues(result->outputs.at(0)).at(0));
      } else {
        errors_.push_back(result.status());
      }
    };
  }
  std::vector<float> values() {
    absl::MutexLock lock(&mu_);
    return values_;
  }
  size_t errors() {
    absl::MutexLock lock(&mu_);
    return errors_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<float> values_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> errors_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<QueueScheduler> MakeScheduler(std::shared_ptr<const BucketedModel> model,
                                              int64_t queue, int64_t instances) {
  QueueScheduler::Options options;
  options.model_name = "fake";
  options.model = std::move(model);
  options.max_queue_size = queue;
  options.instance_count = instances;
  absl::StatusOr<std::unique_ptr<QueueScheduler>> scheduler =
      QueueScheduler::Create(std::move(options));
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  return std::move(*scheduler);
}

TEST(QueueSchedulerTest, RejectsBadOptions) {
  QueueScheduler::Options options;
  EXPECT_FALSE(QueueScheduler::Create(options).ok());  // no model
  options.model = std::make_shared<FakeModel>(std::vector<int64_t>{1}, nullptr);
  options.instance_count = 0;
  EXPECT_FALSE(QueueScheduler::Create(options).ok());
}

TEST(QueueSchedulerTest, RunsRequestsAndCallsBackOnce) {
  auto model = std::make_shared<FakeModel>(
      std::vector<int64_t>{1, 2},
      [](size_t, const onyx::Feeds& feeds,
         const std::vector<std::string>&) -> absl::StatusOr<std::vector<onyx::Value>> {
        return std::vector<onyx::Value>{feeds.at(0).second};
      });
  Results results;
  auto scheduler = MakeScheduler(model, 8, 1);
  for (float v : {1.0f, 2.0f, 3.0f}) {
    ASSERT_TRUE(scheduler->Enqueue(OneRow(v), results.Callback()).ok());
  }
  scheduler->Stop();                                             // drains
  EXPECT_THAT(results.values(), ElementsAre(1.0f, 2.0f, 3.0f));  // one worker: FIFO
  EXPECT_EQ(results.errors(), 0u);
  EXPECT_EQ(scheduler->InFlight(), 0);
  EXPECT_EQ(model->calls().size(), 3u);
}

TEST(QueueSchedulerTest, FullQueueIsResourceExhausted) {
  GatedModel gated({1});
  Results results;
  auto scheduler = MakeScheduler(gated.model(), /*queue=*/2, /*instances=*/1);
  ASSERT_TRUE(scheduler->Enqueue(OneRow(1), results.Callback()).ok());
  ASSERT_TRUE(gated.AwaitRunning(1));  // the worker holds request 1
  ASSERT_TRUE(scheduler->Enqueue(OneRow(2), results.Callback()).ok());
  ASSERT_TRUE(scheduler->Enqueue(OneRow(3), results.Callback()).ok());
  EXPECT_EQ(scheduler->QueueDepth(), 2);
  EXPECT_EQ(scheduler->InFlight(), 3);

  absl::Status full = scheduler->Enqueue(OneRow(4), results.Callback());
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("fake"));

  gated.Release();
  scheduler->Stop();
  EXPECT_THAT(results.values(), ElementsAre(1.0f, 2.0f, 3.0f));  // the refused one never ran
  EXPECT_EQ(results.errors(), 0u);
}

TEST(QueueSchedulerTest, InstancesRunConcurrently) {
  GatedModel gated({1});
  Results results;
  auto scheduler = MakeScheduler(gated.model(), 8, /*instances=*/2);
  ASSERT_TRUE(scheduler->Enqueue(OneRow(1), results.Callback()).ok());
  ASSERT_TRUE(scheduler->Enqueue(OneRow(2), results.Callback()).ok());
  EXPECT_TRUE(gated.AwaitRunning(2));
  gated.Release();
  scheduler->Stop();
  EXPECT_EQ(gated.max_running(), 2);
  EXPECT_EQ(results.values().size(), 2u);
}

TEST(QueueSchedulerTest, StopDrainsThenRefuses) {
  GatedModel gated({1});
  Results results;
  auto scheduler = MakeScheduler(gated.model(), 8, 1);
  for (float v : {1.0f, 2.0f, 3.0f}) {
    ASSERT_TRUE(scheduler->Enqueue(OneRow(v), results.Callback()).ok());
  }
  ASSERT_TRUE(gated.AwaitRunning(1));
  gated.Release();
  scheduler->Stop();
  EXPECT_EQ(results.values().size(), 3u);  // everything accepted completed
  absl::Status after = scheduler->Enqueue(OneRow(4), results.Callback());
  EXPECT_EQ(after.code(), absl::StatusCode::kUnavailable);
  scheduler->Stop();  // idempotent
}

TEST(QueueSchedulerTest, ErrorsReachTheCallback) {
  auto model = std::make_shared<FakeModel>(
      std::vector<int64_t>{1},
      [](size_t, const onyx::Feeds&, const std::vector<std::string>&)
          -> absl::StatusOr<std::vector<onyx::Value>> { return absl::InternalError("boom"); });
  Results results;
  auto scheduler = MakeScheduler(model, 8, 1);
  ASSERT_TRUE(scheduler->Enqueue(OneRow(1), results.Callback()).ok());
  // Batch 2 fits no bucket of {1}: rejected by the runner, reported via callback.
  auto two = std::make_unique<InferenceRequest>();
  two->inputs.emplace_back("x", onyx::Value(FloatTensor({2, 1}, {1, 2})));
  two->batch_size = 2;
  two->output_names = {"y"};
  ASSERT_TRUE(scheduler->Enqueue(std::move(two), results.Callback()).ok());
  scheduler->Stop();
  EXPECT_EQ(results.errors(), 2u);
}

}  // namespace
}  // namespace onyx::server
