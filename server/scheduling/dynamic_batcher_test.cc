#include "server/scheduling/dynamic_batcher.h"

#include <atomic>
#include <map>
#include <memory>
#include <thread>
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
using ::testing::ElementsAreArray;
using testing::FakeClock;
using testing::FakeModel;
using testing::FloatTensor;
using testing::FloatValues;
using ::testing::HasSubstr;

// Row-wise model: y[r][c] = 2 * x[r][c] + x[r][0] for every requested output
// ("y" and "z" alike), so each output row depends on its input row only. A run
// whose first input value is kBlock waits until the test opens the gate; one
// with a row starting with kPoison fails.
constexpr float kBlock = -1000.0f;
// A run any of whose rows starts with kPoison fails, as the engine does on one
// request's bad values (an index out of range).
constexpr float kPoison = -7.0f;

class RowModel {
 public:
  explicit RowModel(std::vector<int64_t> buckets)
      : model_(std::make_shared<FakeModel>(
            std::move(buckets),
            [this](size_t, const onyx::Feeds& feeds, const std::vector<std::string>& outputs)
                -> absl::StatusOr<std::vector<onyx::Value>> {
              const onyx::Tensor& x = feeds.at(0).second.tensor();
              {
                absl::MutexLock lock(&mu_);
                ++running_;
                max_running_ = std::max(max_running_, running_);
                if (x.data<float>()[0] == kBlock) mu_.Await(absl::Condition(&open_));
                --running_;
              }
              if (fail_) return absl::InternalError("engine failed");
              for (int64_t r = 0; r < x.dims()[0]; ++r) {
                if (x.data<float>()[r * x.dims()[1]] == kPoison) {
                  return absl::InvalidArgumentError("node 'gather': index out of range");
                }
              }
              onyx::Tensor y = onyx::Tensor::Allocate(onyx::DataType::kFloat, x.dims());
              const int64_t cols = x.dims()[1];
              for (int64_t r = 0; r < x.dims()[0]; ++r) {
                for (int64_t c = 0; c < cols; ++c) {
                  y.mutable_data<float>()[r * cols + c] =
                      2 * x.data<float>()[r * cols + c] + x.data<float>()[r * cols];
                }
              }
              return std::vector<onyx::Value>(outputs.size(), onyx::Value(y));
            })) {}

  std::shared_ptr<FakeModel> model() const { return model_; }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  bool AwaitRunning(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }
  int max_running() {
    absl::MutexLock lock(&mu_);
    return max_running_;
  }
  void set_fail() { fail_ = true; }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int max_running_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> fail_{false};
  std::shared_ptr<FakeModel> model_;
};

// Wraps a FakeModel run function so that a run whose first input value is
// kBlock waits until Open(): the test holds one worker busy with it.
class Gate {
 public:
  FakeModel::RunFn Wrap(FakeModel::RunFn inner) {
    return [this, inner = std::move(inner)](size_t bucket, const onyx::Feeds& feeds,
                                            const std::vector<std::string>& outputs) {
      if (feeds.at(0).second.tensor().data<float>()[0] == kBlock) {
        absl::MutexLock lock(&mu_);
        ++blocked_;
        mu_.Await(absl::Condition(&open_));
      }
      return inner(bucket, feeds, outputs);
    };
  }
  bool AwaitBlocked() {
    absl::MutexLock lock(&mu_);
    auto reached = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return blocked_ >= 1; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  int blocked_ ABSL_GUARDED_BY(mu_) = 0;
};

// The expected output of RowModel for `x` ([rows, cols]), computed here.
std::vector<float> Expected(const std::vector<float>& x, int64_t cols) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = 2 * x[i] + x[i - i % cols];
  return y;
}

std::unique_ptr<InferenceRequest> Rows(int64_t rows, int64_t cols, float first,
                                       std::vector<std::string> outputs = {"y"}) {
  std::vector<float> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = first + static_cast<float>(i);
  auto request = std::make_unique<InferenceRequest>();
  request->inputs.emplace_back("x", onyx::Value(FloatTensor({rows, cols}, values)));
  request->batch_size = rows;
  request->output_names = std::move(outputs);
  return request;
}

std::vector<float> InputValues(const InferenceRequest& request) {
  return FloatValues(request.inputs.at(0).second.tensor());
}

// Outcomes by request index, filled from worker threads.
class Outcomes {
 public:
  DoneCallback Callback(int index) {
    return [this, index](absl::StatusOr<InferenceResult> result) {
      absl::MutexLock lock(&mu_);
      EXPECT_FALSE(results_.contains(index)) << "request " << index << " completed twice";
      results_.emplace(index, std::move(result));
    };
  }
  bool AwaitCount(size_t n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return results_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }
  absl::StatusOr<InferenceResult> Get(int index) {
    absl::MutexLock lock(&mu_);
    auto it = results_.find(index);
    if (it == results_.end()) return absl::NotFoundError("no outcome");
    return it->second;
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return results_.size();
  }

 private:
  absl::Mutex mu_;
  std::map<int, absl::StatusOr<InferenceResult>> results_ ABSL_GUARDED_BY(mu_);
};

// The batcher's options; the buckets are the model's (RowModel's).
struct BatcherSetup {
  int64_t max_batch_size = 0;
  absl::Duration delay = absl::Hours(1);
  int64_t queue = 64;
  int64_t instances = 1;
  BatchObserver on_batch;
  std::function<void(int64_t)> on_batch_formed;
};

std::unique_ptr<DynamicBatcher> MakeBatcher(std::shared_ptr<const BucketedModel> model,
                                            std::shared_ptr<const Clock> clock,
                                            BatcherSetup setup = {}) {
  DynamicBatcher::Options options;
  options.model_name = "fake";
  options.model = std::move(model);
  options.max_batch_size = setup.max_batch_size;
  options.max_queue_delay = setup.delay;
  options.max_queue_size = setup.queue;
  options.instance_count = setup.instances;
  options.clock = std::move(clock);
  options.on_batch = setup.on_batch;
  options.on_batch_formed = setup.on_batch_formed;
  absl::StatusOr<std::unique_ptr<DynamicBatcher>> batcher =
      DynamicBatcher::Create(std::move(options));
  EXPECT_TRUE(batcher.ok()) << batcher.status();
  return std::move(*batcher);
}

// Keeps the model busy: a blocking run of one row holds one worker (with
// setup.instances = 2 the other one then waits for batches to fill; with one,
// requests stay queued). The blocker is the first engine call; its outcome is
// reported as index -1.
void HoldOneWorker(DynamicBatcher& batcher, RowModel& row_model, Outcomes& outcomes, int64_t cols) {
  ASSERT_TRUE(batcher.Enqueue(Rows(1, cols, kBlock), outcomes.Callback(-1)).ok());
  ASSERT_TRUE(row_model.AwaitRunning(1));
}

// Expects request `index` to have succeeded with RowModel's output of `input`.
void ExpectRows(Outcomes& outcomes, int index, const InferenceRequest& input, int64_t cols) {
  absl::StatusOr<InferenceResult> result = outcomes.Get(index);
  ASSERT_TRUE(result.ok()) << "request " << index << ": " << result.status();
  ASSERT_EQ(result->outputs.size(), input.output_names.size());
  for (const onyx::Tensor& out : result->outputs) {
    EXPECT_THAT(out.dims(), ElementsAre(input.batch_size, cols)) << "request " << index;
    EXPECT_THAT(FloatValues(out), ElementsAreArray(Expected(InputValues(input), cols)))
        << "request " << index;
  }
}

TEST(DynamicBatcherTest, RejectsBadOptions) {
  DynamicBatcher::Options options;
  EXPECT_FALSE(DynamicBatcher::Create(options).ok());  // no model
  options.model = std::make_shared<FakeModel>(std::vector<int64_t>{1, 4}, nullptr);
  options.instance_count = 0;
  EXPECT_FALSE(DynamicBatcher::Create(options).ok());
  options.instance_count = 1;
  options.max_batch_size = 5;  // larger than the largest bucket
  EXPECT_FALSE(DynamicBatcher::Create(options).ok());
  options.max_batch_size = 4;
  options.max_queue_delay = absl::Microseconds(-1);
  EXPECT_FALSE(DynamicBatcher::Create(options).ok());
}

TEST(DynamicBatcherTest, MergesCompatibleRequestsIntoOneRun) {
  RowModel row_model({8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.delay = absl::Microseconds(500);
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  HoldOneWorker(*batcher, row_model, outcomes, 2);
  std::vector<std::unique_ptr<InferenceRequest>> inputs;
  inputs.push_back(Rows(1, 2, 10));
  inputs.push_back(Rows(2, 2, 20));
  inputs.push_back(Rows(3, 2, 30));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        batcher->Enqueue(std::make_unique<InferenceRequest>(*inputs[i]), outcomes.Callback(i))
            .ok());
  }
  // The model is busy and 6 rows is not max: the batch waits for the delay.
  ASSERT_TRUE(clock->AwaitWaiter(clock->Now() + absl::Microseconds(500)));
  EXPECT_EQ(row_model.model()->calls().size(), 1u);  // the blocker only
  clock->Advance(absl::Microseconds(500));
  ASSERT_TRUE(outcomes.AwaitCount(3));
  row_model.Open();
  batcher->Stop();

  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 2u);  // the blocker, then one engine run for all three
  const onyx::Tensor& fed = calls[1].feeds.at(0).second.tensor();
  EXPECT_THAT(fed.dims(), ElementsAre(8, 2));
  EXPECT_THAT(FloatValues(fed), ElementsAre(10, 11,                  // request 0
                                            20, 21, 22, 23,          // request 1
                                            30, 31, 32, 33, 34, 35,  // request 2
                                            0, 0, 0, 0));            // padding
  for (int i = 0; i < 3; ++i) ExpectRows(outcomes, i, *inputs[i], 2);
}

TEST(DynamicBatcherTest, IdleModelRunsWhatIsQueuedAtOnce) {
  RowModel row_model({4, 8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);  // delay: 1 h, never advanced
  // No other run is in progress: one row is neither max nor a bucket, yet it
  // runs at once, padded to bucket 4.
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 7), outcomes.Callback(0)).ok());
  ASSERT_TRUE(outcomes.AwaitCount(1));
  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].bucket_index, 0u);
  EXPECT_THAT(FloatValues(calls[0].feeds.at(0).second.tensor()), ElementsAre(7, 0, 0, 0));
}

TEST(DynamicBatcherTest, UnderLoadABucketSizedBatchWaitsAndAFullOneRunsAtOnce) {
  RowModel row_model({4, 8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);  // delay: 1 h, never advanced
  HoldOneWorker(*batcher, row_model, outcomes, 1);
  const absl::Time send_by = clock->Now() + absl::Hours(1);
  // 1 + 3 rows fill bucket 4 exactly, but the model is busy and max is 8: wait.
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 1), outcomes.Callback(0)).ok());
  ASSERT_TRUE(batcher->Enqueue(Rows(3, 1, 2), outcomes.Callback(1)).ok());
  ASSERT_TRUE(clock->AwaitWaiter(send_by));
  EXPECT_EQ(row_model.model()->calls().size(), 1u);  // the blocker only
  EXPECT_EQ(batcher->QueueDepth(), 2);
  // 4 more rows reach max_batch_size (the largest bucket): the batch runs at once.
  ASSERT_TRUE(batcher->Enqueue(Rows(4, 1, 10), outcomes.Callback(2)).ok());
  ASSERT_TRUE(outcomes.AwaitCount(3));
  row_model.Open();
  batcher->Stop();
  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].bucket_index, 1u);  // exactly bucket 8, no padding
  EXPECT_THAT(FloatValues(calls[1].feeds.at(0).second.tensor()),
              ElementsAre(1, 2, 3, 4, 10, 11, 12, 13));
}

TEST(DynamicBatcherTest, AWaitingBatchRunsOnceTheOtherEngineRunEnds) {
  RowModel row_model({4, 8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);  // delay: 1 h, never advanced
  // The blocker's completion (its reply) does not return until released, so
  // its worker cannot come back to the queue.
  absl::Notification replied, release;
  ASSERT_TRUE(batcher
                  ->Enqueue(
                      Rows(1, 1, kBlock),
                      [&](absl::StatusOr<InferenceResult>) {
    replied.Notify();
    release.WaitForNotification();
                      })
                  .ok());
  ASSERT_TRUE(row_model.AwaitRunning(1));
  auto input = Rows(2, 1, 5);
  ASSERT_TRUE(
      batcher->Enqueue(std::make_unique<InferenceRequest>(*input), outcomes.Callback(0)).ok());
  ASSERT_TRUE(clock->AwaitWaiter(clock->Now() + absl::Hours(1)));  // busy: it waits
  EXPECT_EQ(outcomes.size(), 0u);
  row_model.Open();  // the blocker's engine run ends; its reply hangs
  ASSERT_TRUE(replied.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // The waiting worker runs the batch without the delay, while the other one
  // is still completing its request.
  ASSERT_TRUE(outcomes.AwaitCount(1));
  ExpectRows(outcomes, 0, *input, 1);
  release.Notify();
  batcher->Stop();
  EXPECT_EQ(row_model.model()->calls().size(), 2u);
}

TEST(DynamicBatcherTest, DelayExpirySendsAPartialBatch) {
  RowModel row_model({2, 4});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.delay = absl::Microseconds(500);
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  HoldOneWorker(*batcher, row_model, outcomes, 3);
  const absl::Time start = clock->Now();
  auto input = Rows(1, 3, 7);
  ASSERT_TRUE(
      batcher->Enqueue(std::make_unique<InferenceRequest>(*input), outcomes.Callback(0)).ok());
  // The worker waits for the head's delay to run out.
  ASSERT_TRUE(clock->AwaitWaiter(start + absl::Microseconds(500)));
  clock->Advance(absl::Microseconds(499));
  ASSERT_TRUE(clock->AwaitWaiter(start + absl::Microseconds(500)));
  EXPECT_EQ(outcomes.size(), 0u);
  EXPECT_EQ(row_model.model()->calls().size(), 1u);  // the blocker only
  clock->Advance(absl::Microseconds(1));
  ASSERT_TRUE(outcomes.AwaitCount(1));
  row_model.Open();
  batcher->Stop();
  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].bucket_index, 0u);  // one row padded to bucket 2
  EXPECT_THAT(FloatValues(calls[1].feeds.at(0).second.tensor()), ElementsAre(7, 8, 9, 0, 0, 0));
  ExpectRows(outcomes, 0, *input, 3);
}

TEST(DynamicBatcherTest, IncompatibleRequestsAreNeverMerged) {
  RowModel row_model({8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.delay = absl::Microseconds(100);
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  HoldOneWorker(*batcher, row_model, outcomes, 2);
  std::vector<std::unique_ptr<InferenceRequest>> inputs;
  inputs.push_back(Rows(1, 2, 1));                // A
  inputs.push_back(Rows(1, 3, 100));              // B: other trailing dims
  inputs.push_back(Rows(1, 2, 200, {"z"}));       // C: other outputs
  inputs.push_back(Rows(2, 2, 300));              // D: compatible with A
  inputs.push_back(Rows(1, 2, 400, {"y", "z"}));  // E: other outputs again
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    ASSERT_TRUE(
        batcher->Enqueue(std::make_unique<InferenceRequest>(*inputs[i]), outcomes.Callback(i))
            .ok());
  }
  clock->Advance(absl::Microseconds(100));
  ASSERT_TRUE(outcomes.AwaitCount(inputs.size()));
  row_model.Open();
  batcher->Stop();

  // After the blocker, runs in order of their heads: {A, D}, {B}, {C}, {E}.
  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_THAT(FloatValues(calls[1].feeds.at(0).second.tensor()),
              ElementsAre(1, 2, 300, 301, 302, 303, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(calls[2].feeds.at(0).second.tensor().dims(), ElementsAre(8, 3));
  EXPECT_EQ(FloatValues(calls[3].feeds.at(0).second.tensor())[0], 200);
  EXPECT_EQ(FloatValues(calls[4].feeds.at(0).second.tensor())[0], 400);
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    ExpectRows(outcomes, i, *inputs[i], i == 1 ? 3 : 2);
  }
}

TEST(DynamicBatcherTest, PaddingAndSlicingAreExactForMixedBatchSizes) {
  RowModel row_model({1, 2, 4, 8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  auto batcher = MakeBatcher(row_model.model(), clock);  // buckets 1,2,4,8; delay 1 h
  // The blocker fills bucket 8 and holds the only worker while the rest queue.
  auto blocker = Rows(8, 2, 0);
  blocker->inputs[0].second.mutable_tensor().mutable_data<float>()[0] = kBlock;
  ASSERT_TRUE(batcher->Enqueue(std::move(blocker), outcomes.Callback(-1)).ok());
  ASSERT_TRUE(row_model.AwaitRunning(1));
  const std::vector<int64_t> sizes = {3, 1, 2, 2, 5, 1, 4};
  std::vector<std::unique_ptr<InferenceRequest>> inputs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    inputs.push_back(Rows(sizes[i], 2, 100.0f * static_cast<float>(i + 1)));
    ASSERT_TRUE(batcher
                    ->Enqueue(std::make_unique<InferenceRequest>(*inputs[i]),
                              outcomes.Callback(static_cast<int>(i)))
                    .ok());
  }
  EXPECT_EQ(batcher->QueueDepth(), 7);
  row_model.Open();
  // The only worker comes back to an idle model, so nothing waits for the
  // delay (the clock never moves): 3+1+2+2 = 8, then 5+1 = 6 (4 does not fit)
  // padded to 8, then 4.
  ASSERT_TRUE(outcomes.AwaitCount(8));
  batcher->Stop();

  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 4u);
  std::vector<int64_t> fed_rows;
  for (const auto& call : calls) fed_rows.push_back(call.feeds.at(0).second.tensor().dims()[0]);
  EXPECT_THAT(fed_rows, ElementsAre(8, 8, 8, 4));
  // Rows 6 and 7 of the third run are padding.
  const std::vector<float> third = FloatValues(calls[2].feeds.at(0).second.tensor());
  EXPECT_THAT(std::vector<float>(third.begin() + 12, third.end()), ElementsAre(0, 0, 0, 0));
  for (size_t i = 0; i < sizes.size(); ++i)
    ExpectRows(outcomes, static_cast<int>(i), *inputs[i], 2);
}

TEST(DynamicBatcherTest, FullQueueIsResourceExhausted) {
  RowModel row_model({1});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.queue = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, kBlock), outcomes.Callback(0)).ok());
  ASSERT_TRUE(row_model.AwaitRunning(1));  // the worker holds request 0
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 1), outcomes.Callback(1)).ok());
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 2), outcomes.Callback(2)).ok());
  EXPECT_EQ(batcher->QueueDepth(), 2);
  EXPECT_EQ(batcher->InFlight(), 3);

  absl::Status full = batcher->Enqueue(Rows(1, 1, 3), outcomes.Callback(3));
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("'fake'"));
  EXPECT_THAT(full.message(), HasSubstr("max_queue_size 2"));

  row_model.Open();
  batcher->Stop();
  EXPECT_EQ(outcomes.size(), 3u);  // the refused one never ran nor completed
  EXPECT_EQ(row_model.model()->calls().size(), 3u);
}

std::vector<float> AllEngineInputs(const FakeModel& model);

TEST(DynamicBatcherTest, FullQueueCarriesItsReasonAndARetryHintFromRecentRuns) {
  auto clock = std::make_shared<FakeClock>();
  Gate gate;
  // Every engine run takes 40 ms of fake time; y = x.
  auto model = std::make_shared<FakeModel>(
      std::vector<int64_t>{1},
      gate.Wrap([clock](size_t, const onyx::Feeds& feeds, const std::vector<std::string>& outputs)
                    -> absl::StatusOr<std::vector<onyx::Value>> {
        clock->Advance(absl::Milliseconds(40));
        return std::vector<onyx::Value>(outputs.size(), feeds.at(0).second);
      }));
  Outcomes outcomes;
  BatcherSetup setup;
  setup.queue = 2;
  auto batcher = MakeBatcher(model, clock, setup);
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 1), outcomes.Callback(0)).ok());
  ASSERT_TRUE(outcomes.AwaitCount(1));  // one run of 40 ms
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, kBlock), outcomes.Callback(1)).ok());
  ASSERT_TRUE(gate.AwaitBlocked());
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 2), outcomes.Callback(2)).ok());
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 3), outcomes.Callback(3)).ok());

  // Two queued requests, one row per run, one worker: two runs of 40 ms.
  EXPECT_EQ(batcher->RetryAfterHint(), absl::Milliseconds(80));
  absl::Status full = batcher->Enqueue(Rows(1, 1, 4), outcomes.Callback(4));
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RejectionReasonOf(full), RejectionReason::kQueueFull);
  EXPECT_EQ(RetryAfterOf(full), absl::Milliseconds(80));
  EXPECT_THAT(full.message(), HasSubstr("retry in about 80 ms"));

  gate.Open();
  batcher->Stop();
  EXPECT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(batcher->InFlight(), 0);
}

TEST(DynamicBatcherTest, ARequestWhoseDeadlineHasPassedIsNotQueued) {
  RowModel row_model({1});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  auto batcher = MakeBatcher(row_model.model(), clock);
  auto late = Rows(1, 1, 1);
  late->deadline = clock->Now();
  absl::Status refused = batcher->Enqueue(std::move(late), outcomes.Callback(0));
  EXPECT_EQ(refused.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(RejectionReasonOf(refused), RejectionReason::kDeadlineOnArrival);
  EXPECT_THAT(refused.message(), HasSubstr("'fake'"));
  auto zero_timeout = Rows(1, 1, 2);
  zero_timeout->timeout = absl::ZeroDuration();
  EXPECT_EQ(batcher->Enqueue(std::move(zero_timeout), outcomes.Callback(1)).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(batcher->InFlight(), 0);
  batcher->Stop();
  EXPECT_EQ(outcomes.size(), 0u);
  EXPECT_TRUE(row_model.model()->calls().empty());
}

TEST(DynamicBatcherTest, DeadlinesAreCheckedAgainRightBeforeTheRun) {
  RowModel row_model({1, 2, 4});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.delay = absl::ZeroDuration();
  // Once armed, 20 ms pass between a batch leaving the queue and its run.
  auto armed = std::make_shared<std::atomic<bool>>(false);
  setup.on_batch_formed = [clock, armed](int64_t) {
    if (armed->load()) clock->Advance(absl::Milliseconds(20));
  };
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  HoldOneWorker(*batcher, row_model, outcomes, 1);
  const absl::Time start = clock->Now();
  auto expiring = Rows(1, 1, 10);
  expiring->deadline = start + absl::Milliseconds(10);
  auto keeper = Rows(1, 1, 20);
  ASSERT_TRUE(batcher->Enqueue(std::move(expiring), outcomes.Callback(0)).ok());
  ASSERT_TRUE(
      batcher->Enqueue(std::make_unique<InferenceRequest>(*keeper), outcomes.Callback(1)).ok());
  armed->store(true);
  row_model.Open();  // the worker takes both as one batch; 20 ms pass; only one is alive
  ASSERT_TRUE(outcomes.AwaitCount(3));
  EXPECT_EQ(outcomes.Get(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(RejectionReasonOf(outcomes.Get(0).status()), RejectionReason::kDeadlineBeforeRun);
  EXPECT_THAT(outcomes.Get(0).status().message(), HasSubstr("before the request ran"));
  ExpectRows(outcomes, 1, *keeper, 1);

  // A batch with nobody left alive costs no run at all.
  auto alone = Rows(1, 1, 30);
  alone->deadline = clock->Now() + absl::Milliseconds(10);
  ASSERT_TRUE(batcher->Enqueue(std::move(alone), outcomes.Callback(2)).ok());
  ASSERT_TRUE(outcomes.AwaitCount(4));
  EXPECT_EQ(RejectionReasonOf(outcomes.Get(2).status()), RejectionReason::kDeadlineBeforeRun);
  batcher->Stop();
  EXPECT_THAT(AllEngineInputs(*row_model.model()), ElementsAre(kBlock, 20));
  EXPECT_EQ(batcher->InFlight(), 0);
}

TEST(DynamicBatcherTest, ExpiredRequestsGetDeadlineExceededWithoutRunning) {
  RowModel row_model({8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.delay = absl::Microseconds(1000);
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  HoldOneWorker(*batcher, row_model, outcomes, 1);
  const absl::Time start = clock->Now();
  auto by_timeout = Rows(1, 1, 1);
  by_timeout->timeout = absl::Microseconds(100);
  auto by_deadline = Rows(1, 1, 2);
  by_deadline->deadline = start + absl::Microseconds(300);
  auto keeper = Rows(1, 1, 3);
  keeper->deadline = start + absl::Seconds(10);
  ASSERT_TRUE(batcher->Enqueue(std::move(by_timeout), outcomes.Callback(0)).ok());
  ASSERT_TRUE(batcher->Enqueue(std::move(by_deadline), outcomes.Callback(1)).ok());
  ASSERT_TRUE(batcher->Enqueue(std::move(keeper), outcomes.Callback(2)).ok());

  // The reaper wakes at the earliest deadline, before the delay.
  ASSERT_TRUE(clock->AwaitWaiter(start + absl::Microseconds(100)));
  clock->Advance(absl::Microseconds(100));
  ASSERT_TRUE(outcomes.AwaitCount(1));
  EXPECT_EQ(outcomes.Get(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(RejectionReasonOf(outcomes.Get(0).status()), RejectionReason::kDeadlineInQueue);
  ASSERT_TRUE(clock->AwaitWaiter(start + absl::Microseconds(300)));
  clock->Advance(absl::Microseconds(200));
  ASSERT_TRUE(outcomes.AwaitCount(2));
  EXPECT_EQ(outcomes.Get(1).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(row_model.model()->calls().size(), 1u);  // the blocker only

  clock->Advance(absl::Microseconds(700));  // the delay runs out: the keeper runs alone
  ASSERT_TRUE(outcomes.AwaitCount(3));
  EXPECT_TRUE(outcomes.Get(2).ok());
  row_model.Open();
  batcher->Stop();
  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(FloatValues(calls[1].feeds.at(0).second.tensor())[0], 3);
  EXPECT_EQ(FloatValues(calls[1].feeds.at(0).second.tensor())[1], 0);
}

TEST(DynamicBatcherTest, CancelledRequestsNeverRun) {
  RowModel row_model({1, 2, 4});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  ASSERT_TRUE(batcher->Enqueue(Rows(4, 1, kBlock), outcomes.Callback(0)).ok());
  ASSERT_TRUE(row_model.AwaitRunning(1));
  auto cancelled_flag = std::make_shared<std::atomic<bool>>(false);
  auto cancelled = Rows(1, 1, 50);
  cancelled->is_cancelled = [cancelled_flag] { return cancelled_flag->load(); };
  ASSERT_TRUE(batcher->Enqueue(std::move(cancelled), outcomes.Callback(1)).ok());
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 60), outcomes.Callback(2)).ok());
  cancelled_flag->store(true);  // the client goes away while queued
  row_model.Open();
  ASSERT_TRUE(outcomes.AwaitCount(3));
  batcher->Stop();

  EXPECT_EQ(outcomes.Get(1).status().code(), absl::StatusCode::kCancelled);
  ASSERT_TRUE(outcomes.Get(2).ok());
  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 2u);  // the blocker and request 2 only
  EXPECT_THAT(FloatValues(calls[1].feeds.at(0).second.tensor()), ElementsAre(60));
}

// Every input value the engine was given, over all runs.
std::vector<float> AllEngineInputs(const FakeModel& model) {
  std::vector<float> all;
  for (const FakeModel::Call& call : model.calls()) {
    for (float v : FloatValues(call.feeds.at(0).second.tensor())) all.push_back(v);
  }
  return all;
}

TEST(DynamicBatcherTest, DeadRequestsAreAnsweredWhileTheOnlyWorkerIsBusy) {
  RowModel row_model({1, 2, 4});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);  // one worker
  HoldOneWorker(*batcher, row_model, outcomes, 1);
  const absl::Time start = clock->Now();
  auto expiring = Rows(1, 1, 10);
  expiring->timeout = absl::Microseconds(100);
  auto cancelled_flag = std::make_shared<std::atomic<bool>>(false);
  auto cancellable = Rows(1, 1, 20);
  cancellable->is_cancelled = [cancelled_flag] { return cancelled_flag->load(); };
  auto keeper = Rows(1, 1, 30);
  ASSERT_TRUE(batcher->Enqueue(std::move(expiring), outcomes.Callback(0)).ok());
  ASSERT_TRUE(batcher->Enqueue(std::move(cancellable), outcomes.Callback(1)).ok());
  ASSERT_TRUE(
      batcher->Enqueue(std::make_unique<InferenceRequest>(*keeper), outcomes.Callback(2)).ok());

  // The deadline passes while the worker is still blocked in its run.
  ASSERT_TRUE(clock->AwaitWaiter(start + absl::Microseconds(100)));
  clock->Advance(absl::Microseconds(100));
  ASSERT_TRUE(outcomes.AwaitCount(1));
  EXPECT_EQ(outcomes.Get(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(outcomes.Get(0).status().message(), HasSubstr("'fake'"));

  // The client goes away while the reaper sleeps; its next poll notices it.
  const absl::Time poll = start + absl::Microseconds(100) + DynamicBatcher::kCancelPollInterval;
  ASSERT_TRUE(clock->AwaitWaiter(poll));
  cancelled_flag->store(true);
  clock->Advance(DynamicBatcher::kCancelPollInterval);
  ASSERT_TRUE(outcomes.AwaitCount(2));
  EXPECT_EQ(outcomes.Get(1).status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(outcomes.Get(1).status().message(), HasSubstr("'fake'"));
  EXPECT_EQ(outcomes.size(), 2u);  // neither the blocker nor the keeper is done
  EXPECT_EQ(batcher->QueueDepth(), 1);
  EXPECT_EQ(row_model.model()->calls().size(), 1u);  // the blocker only

  row_model.Open();
  batcher->Stop();
  EXPECT_EQ(outcomes.size(), 4u);
  ExpectRows(outcomes, 2, *keeper, 1);
  EXPECT_THAT(AllEngineInputs(*row_model.model()), ElementsAre(kBlock, 30));
}

TEST(DynamicBatcherTest, ACancellationWithinTheRequestsSlackOfItsDeadlineIsTheDeadline) {
  RowModel row_model({1, 2, 4});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);  // one worker
  HoldOneWorker(*batcher, row_model, outcomes, 1);
  const absl::Time start = clock->Now();
  auto cancelled_flag = std::make_shared<std::atomic<bool>>(false);
  // Both due 20 ms from now; only the first says a cancellation up to 50 ms
  // before its deadline is the deadline.
  auto with_slack = Rows(1, 1, 10);
  with_slack->deadline = start + absl::Milliseconds(20);
  with_slack->deadline_cancel_slack = absl::Milliseconds(50);
  with_slack->is_cancelled = [cancelled_flag] { return cancelled_flag->load(); };
  auto without_slack = Rows(1, 1, 20);
  without_slack->deadline = start + absl::Milliseconds(20);
  without_slack->is_cancelled = [cancelled_flag] { return cancelled_flag->load(); };
  ASSERT_TRUE(batcher->Enqueue(std::move(with_slack), outcomes.Callback(0)).ok());
  ASSERT_TRUE(batcher->Enqueue(std::move(without_slack), outcomes.Callback(1)).ok());

  // Cancelled 15 ms before the deadline; the reaper's first poll sees it.
  ASSERT_TRUE(clock->AwaitWaiter(start + DynamicBatcher::kCancelPollInterval));
  cancelled_flag->store(true);
  clock->Advance(DynamicBatcher::kCancelPollInterval);
  ASSERT_TRUE(outcomes.AwaitCount(2));
  EXPECT_EQ(outcomes.Get(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(outcomes.Get(0).status().message(),
              HasSubstr("deadline passed while the request was queued"));
  EXPECT_EQ(outcomes.Get(1).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(row_model.model()->calls().size(), 1u);  // the blocker only

  row_model.Open();
  batcher->Stop();
  EXPECT_EQ(outcomes.size(), 3u);
}

TEST(DynamicBatcherTest, StopAnswersDeadAndLiveQueuedRequestsExactlyOnce) {
  RowModel row_model({1, 2, 4});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);  // one worker
  HoldOneWorker(*batcher, row_model, outcomes, 1);
  const absl::Time start = clock->Now();
  auto live_a = Rows(1, 1, 10);
  auto expiring = Rows(1, 1, 20);
  expiring->deadline = start + absl::Milliseconds(1);
  auto cancelled_flag = std::make_shared<std::atomic<bool>>(false);
  auto cancellable = Rows(1, 1, 30);
  cancellable->is_cancelled = [cancelled_flag] { return cancelled_flag->load(); };
  auto live_b = Rows(1, 1, 40);
  live_b->deadline = start + absl::Hours(1);
  ASSERT_TRUE(
      batcher->Enqueue(std::make_unique<InferenceRequest>(*live_a), outcomes.Callback(0)).ok());
  ASSERT_TRUE(batcher->Enqueue(std::move(expiring), outcomes.Callback(1)).ok());
  ASSERT_TRUE(batcher->Enqueue(std::move(cancellable), outcomes.Callback(2)).ok());
  ASSERT_TRUE(
      batcher->Enqueue(std::make_unique<InferenceRequest>(*live_b), outcomes.Callback(3)).ok());

  // Stop waits for the blocked run; meanwhile both dead requests die.
  std::thread stopper([&batcher] { batcher->Stop(); });
  cancelled_flag->store(true);
  clock->Advance(DynamicBatcher::kCancelPollInterval);  // past the deadline and a poll
  ASSERT_TRUE(outcomes.AwaitCount(2));
  EXPECT_EQ(outcomes.Get(1).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(outcomes.Get(2).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(row_model.model()->calls().size(), 1u);  // the blocker only

  row_model.Open();
  stopper.join();
  EXPECT_EQ(outcomes.size(), 5u);  // each once (Outcomes fails on a second answer)
  ExpectRows(outcomes, 0, *live_a, 1);
  ExpectRows(outcomes, 3, *live_b, 1);
  EXPECT_TRUE(outcomes.Get(-1).ok());
  EXPECT_EQ(batcher->InFlight(), 0);
  EXPECT_THAT(AllEngineInputs(*row_model.model()), ::testing::UnorderedElementsAre(kBlock, 10, 40));
}

TEST(DynamicBatcherTest, InstanceCountWorkersRunConcurrentlyAndNoMore) {
  RowModel row_model({1});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, kBlock), outcomes.Callback(i)).ok());
  }
  ASSERT_TRUE(row_model.AwaitRunning(2));
  EXPECT_EQ(batcher->QueueDepth(), 1);  // two workers busy, the third request waits
  row_model.Open();
  batcher->Stop();
  EXPECT_EQ(row_model.max_running(), 2);
  EXPECT_EQ(outcomes.size(), 3u);
}

TEST(DynamicBatcherTest, AFailedBatchRunsEachRequestAloneAndEachFailureNamesTheModel) {
  RowModel row_model({4});
  row_model.set_fail();
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  HoldOneWorker(*batcher, row_model, outcomes, 1);
  // 2 + 2 rows reach max_batch_size 4: one run, at once.
  ASSERT_TRUE(batcher->Enqueue(Rows(2, 1, 1), outcomes.Callback(0)).ok());
  ASSERT_TRUE(batcher->Enqueue(Rows(2, 1, 5), outcomes.Callback(1)).ok());
  ASSERT_TRUE(outcomes.AwaitCount(2));
  row_model.Open();
  batcher->Stop();
  // The blocker, the batch, then each request alone.
  const auto calls = row_model.model()->calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_THAT(FloatValues(calls[2].feeds.at(0).second.tensor()),
              ElementsAre(1, 2, 0, 0));  // bucket 4
  EXPECT_THAT(FloatValues(calls[3].feeds.at(0).second.tensor()), ElementsAre(5, 6, 0, 0));
  EXPECT_EQ(outcomes.Get(0).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(outcomes.Get(1).status().code(), absl::StatusCode::kInternal);
  // The engine's message gains the model the client asked for.
  EXPECT_EQ(outcomes.Get(1).status().message(), "model 'fake': engine failed");
}

TEST(DynamicBatcherTest, ABadRequestInABatchFailsOnlyItself) {
  RowModel row_model({8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  BatcherSetup setup;
  setup.instances = 2;
  auto batcher = MakeBatcher(row_model.model(), clock, setup);
  HoldOneWorker(*batcher, row_model, outcomes, 2);
  std::vector<std::unique_ptr<InferenceRequest>> inputs;
  inputs.push_back(Rows(3, 2, 10));
  inputs.push_back(Rows(2, 2, kPoison));  // rows {-7, -6}, {-5, -4}
  inputs.push_back(Rows(3, 2, 30));
  // 3 + 2 + 3 rows fill max_batch_size 8: one run, at once, which fails.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        batcher->Enqueue(std::make_unique<InferenceRequest>(*inputs[i]), outcomes.Callback(i))
            .ok());
  }
  ASSERT_TRUE(outcomes.AwaitCount(3));
  row_model.Open();
  batcher->Stop();
  EXPECT_EQ(row_model.model()->calls().size(), 5u);  // blocker, batch, three alone
  ExpectRows(outcomes, 0, *inputs[0], 2);
  ExpectRows(outcomes, 2, *inputs[2], 2);
  ASSERT_FALSE(outcomes.Get(1).ok());
  EXPECT_EQ(outcomes.Get(1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(outcomes.Get(1).status().message(), "model 'fake': node 'gather': index out of range");
}

TEST(DynamicBatcherTest, StopDrainsWithoutWaitingForTheDelayThenRefuses) {
  RowModel row_model({8});
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  std::vector<std::pair<int64_t, int64_t>> observed;
  BatcherSetup setup;
  setup.on_batch = [&observed](int64_t requests, int64_t rows) {
    observed.emplace_back(requests, rows);  // one worker: no race
  };
  auto batcher = MakeBatcher(row_model.model(), clock, setup);  // delay 1 h
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 1, 1), outcomes.Callback(0)).ok());
  ASSERT_TRUE(batcher->Enqueue(Rows(2, 1, 2), outcomes.Callback(1)).ok());
  batcher->Stop();  // the clock never moved
  EXPECT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(batcher->InFlight(), 0);
  EXPECT_EQ(batcher->Enqueue(Rows(1, 1, 3), outcomes.Callback(2)).code(),
            absl::StatusCode::kUnavailable);
  batcher->Stop();  // idempotent
  // Either one run of both, or (if the worker took request 0 alone at stop) two.
  int64_t requests = 0, rows = 0;
  for (auto [n, r] : observed) {
    requests += n;
    rows += r;
  }
  EXPECT_EQ(requests, 2);
  EXPECT_EQ(rows, 3);
}

TEST(DynamicBatcherTest, ModelWithoutBucketsRunsRequestsAlone) {
  auto model = std::make_shared<FakeModel>(
      std::vector<int64_t>{},
      [](size_t, const onyx::Feeds& feeds,
         const std::vector<std::string>&) -> absl::StatusOr<std::vector<onyx::Value>> {
        return std::vector<onyx::Value>{feeds.at(0).second};
      });
  auto clock = std::make_shared<FakeClock>();
  Outcomes outcomes;
  auto batcher = MakeBatcher(model, clock);
  for (int i = 0; i < 3; ++i) {
    auto request = std::make_unique<InferenceRequest>();
    request->inputs.emplace_back("x", onyx::Value(FloatTensor({2}, {1.0f * i, 2})));
    request->output_names = {"y"};
    ASSERT_TRUE(batcher->Enqueue(std::move(request), outcomes.Callback(i)).ok());
  }
  ASSERT_TRUE(outcomes.AwaitCount(3));  // no delay applies
  EXPECT_EQ(model->calls().size(), 3u);
  EXPECT_THAT(FloatValues(outcomes.Get(2)->outputs.at(0)), ElementsAre(2, 2));
}

// A model with the single bucket 8 whose every run takes exactly `run` of
// fake time and echoes its first feed; runs whose first value is kBlock wait
// at `gate`.
std::shared_ptr<FakeModel> TimedEchoModel(std::shared_ptr<FakeClock> clock, Gate& gate,
                                          absl::Duration run) {
  return std::make_shared<FakeModel>(
      std::vector<int64_t>{8}, gate.Wrap([clock, run](size_t, const onyx::Feeds& feeds,
                                                      const std::vector<std::string>& outputs)
                                             -> absl::StatusOr<std::vector<onyx::Value>> {
        clock->Advance(run);
        return std::vector<onyx::Value>(outputs.size(), feeds.at(0).second);
      }));
}

TEST(DynamicBatcherTest, ResultsCarryQueueAndRunTimesAndEachRunIsObservedOnce) {
  auto clock = std::make_shared<FakeClock>();
  Gate gate;
  // The engine run takes exactly 7 ms of fake time.
  auto model = TimedEchoModel(clock, gate, absl::Milliseconds(7));
  absl::Mutex mu;
  std::vector<std::pair<int64_t, absl::Duration>> runs;
  DynamicBatcher::Options options;
  options.model_name = "fake";
  options.model = model;
  options.max_queue_delay = absl::Microseconds(500);
  options.instance_count = 2;
  options.clock = clock;
  options.on_execution = [&](int64_t rows, absl::Duration run) {
    absl::MutexLock lock(&mu);
    runs.emplace_back(rows, run);
  };
  auto batcher = DynamicBatcher::Create(std::move(options));
  ASSERT_TRUE(batcher.ok()) << batcher.status();
  Outcomes outcomes;
  // A blocked run keeps the model busy, so the next requests wait to batch.
  ASSERT_TRUE((*batcher)->Enqueue(Rows(1, 2, kBlock), outcomes.Callback(-1)).ok());
  ASSERT_TRUE(gate.AwaitBlocked());
  ASSERT_TRUE((*batcher)->Enqueue(Rows(1, 2, 1), outcomes.Callback(0)).ok());
  ASSERT_TRUE((*batcher)->Enqueue(Rows(2, 2, 5), outcomes.Callback(1)).ok());
  // 3 rows is not max: both wait the full 500 us delay, then run together.
  clock->Advance(absl::Microseconds(500));
  ASSERT_TRUE(outcomes.AwaitCount(2));
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<InferenceResult> result = outcomes.Get(i);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->queue_time, absl::Microseconds(500)) << i;
    EXPECT_EQ(result->compute_time, absl::Milliseconds(7)) << i;
  }
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(runs.size(), 1u);  // the blocker's run has not ended
    EXPECT_EQ(runs[0].first, 3);
    EXPECT_EQ(runs[0].second, absl::Milliseconds(7));
  }
  gate.Open();
  (*batcher)->Stop();
}

TEST(DynamicBatcherTest, TimingObserverSeesEachRequestsQueueWaitAndItsRun) {
  auto clock = std::make_shared<FakeClock>();
  Gate gate;
  // The engine run takes exactly 3 ms of fake time.
  auto model = TimedEchoModel(clock, gate, absl::Milliseconds(3));
  absl::Mutex mu;
  std::vector<std::pair<absl::Duration, absl::Duration>> timings;
  DynamicBatcher::Options options;
  options.model_name = "fake";
  options.model = model;
  options.max_queue_delay = absl::Microseconds(400);
  options.instance_count = 2;
  options.clock = clock;
  options.on_timing = [&](absl::Duration queued, absl::Duration compute) {
    absl::MutexLock lock(&mu);
    timings.emplace_back(queued, compute);
  };
  auto batcher = DynamicBatcher::Create(std::move(options));
  ASSERT_TRUE(batcher.ok()) << batcher.status();
  Outcomes outcomes;
  // A blocked run keeps the model busy, so the next requests wait to batch.
  ASSERT_TRUE((*batcher)->Enqueue(Rows(1, 2, kBlock), outcomes.Callback(-1)).ok());
  ASSERT_TRUE(gate.AwaitBlocked());
  ASSERT_TRUE((*batcher)->Enqueue(Rows(1, 2, 1), outcomes.Callback(0)).ok());
  clock->Advance(absl::Microseconds(100));
  ASSERT_TRUE((*batcher)->Enqueue(Rows(2, 2, 5), outcomes.Callback(1)).ok());
  // 3 rows is not max: the batch leaves when the first request has waited
  // 400 us, so the second one waited 300 us.
  clock->Advance(absl::Microseconds(300));
  ASSERT_TRUE(outcomes.AwaitCount(2));
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(timings.size(), 2u);  // the blocker's run has not ended
    EXPECT_EQ(timings[0].first, absl::Microseconds(400));
    EXPECT_EQ(timings[1].first, absl::Microseconds(300));
    EXPECT_EQ(timings[0].second, absl::Milliseconds(3));
    EXPECT_EQ(timings[1].second, absl::Milliseconds(3));
  }
  gate.Open();
  (*batcher)->Stop();
}

TEST(DynamicBatcherTest, MergesOnlyRequestsPaddedToTheSameSize) {
  auto clock = std::make_shared<FakeClock>();
  Gate gate;
  auto model = std::make_shared<FakeModel>(
      std::vector<int64_t>{1, 2, 4},
      gate.Wrap([](size_t, const onyx::Feeds& feeds, const std::vector<std::string>& outputs)
                    -> absl::StatusOr<std::vector<onyx::Value>> {
        return std::vector<onyx::Value>(outputs.size(), feeds.at(0).second);  // identity
      }));
  PaddedDim seq;
  seq.name = "seq";
  seq.sizes = {4, 8};
  seq.inputs = {PaddedDim::Use{"x", 1, 0}};
  seq.outputs = {PaddedDim::Use{"y", 1, 0}};
  model->set_padded_dims({seq});
  BatcherSetup setup;
  setup.delay = absl::Microseconds(100);
  setup.instances = 2;
  auto batcher = MakeBatcher(model, clock, setup);
  Outcomes outcomes;
  // A blocked run keeps the model busy, so the next requests wait to batch.
  ASSERT_TRUE(batcher->Enqueue(Rows(1, 3, kBlock), outcomes.Callback(-1)).ok());
  ASSERT_TRUE(gate.AwaitBlocked());
  std::vector<std::unique_ptr<InferenceRequest>> inputs;
  inputs.push_back(Rows(1, 3, 1));   // pads to 4
  inputs.push_back(Rows(1, 6, 10));  // pads to 8
  inputs.push_back(Rows(1, 2, 20));  // pads to 4: joins request 0
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        batcher->Enqueue(std::make_unique<InferenceRequest>(*inputs[i]), outcomes.Callback(i))
            .ok());
  }
  absl::Status too_long = batcher->Enqueue(Rows(1, 9, 0), outcomes.Callback(3));
  EXPECT_EQ(too_long.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_long.message(), HasSubstr("largest padded size 8"));
  clock->Advance(absl::Microseconds(100));
  ASSERT_TRUE(outcomes.AwaitCount(3));
  gate.Open();
  batcher->Stop();

  const auto calls = model->calls();
  ASSERT_EQ(calls.size(), 3u);
  // After the blocker: requests 0 and 2 ran as one batch of 2 rows padded to
  // length 4 (session bucket 2 x size 4 = index 1 * 2 + 0); request 1 alone
  // at length 8.
  EXPECT_EQ(calls[1].bucket_index, 2u);
  EXPECT_THAT(FloatValues(calls[1].feeds.at(0).second.tensor()),
              ElementsAre(1, 2, 3, 0, 20, 21, 0, 0));
  EXPECT_EQ(calls[2].bucket_index, 1u);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<InferenceResult> result = outcomes.Get(i);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_THAT(FloatValues(result->outputs[0]), ElementsAreArray(InputValues(*inputs[i])));
  }
}

}  // namespace
}  // namespace onyx::server
