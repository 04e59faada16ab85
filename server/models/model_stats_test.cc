#include "server/models/model_stats.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

RequestTimings Timings(int64_t batch, uint64_t end_ms) {
  RequestTimings t;
  t.batch_size = batch;
  t.total_ns = 100;
  t.queue_ns = 10;
  t.compute_input_ns = 20;
  t.compute_infer_ns = 30;
  t.compute_output_ns = 40;
  t.end_ms = end_ms;
  return t;
}

TEST(ModelStatsTest, CountsInferencesByRequestRowsAndExecutionsByEngineRun) {
  ModelStats stats;
  stats.RecordSuccess(Timings(4, 1000));
  stats.RecordSuccess(Timings(4, 1500));
  stats.RecordSuccess(Timings(0, 1200));  // no batch dimension: one inference
  // The scheduler ran the two 4-row requests as one 8-row batch, and the
  // unbatched one alone.
  stats.RecordExecution(8, 500);
  stats.RecordExecution(0, 70);
  const ModelStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.inference_count, 9u);
  EXPECT_EQ(s.execution_count, 2u);
  EXPECT_EQ(s.last_inference_ms, 1500u);
  EXPECT_EQ(s.success.count, 3u);
  EXPECT_EQ(s.success.ns, 300u);
  EXPECT_EQ(s.queue.count, 3u);
  EXPECT_EQ(s.queue.ns, 30u);
  EXPECT_EQ(s.compute_infer.ns, 90u);
  ASSERT_EQ(s.batches.size(), 2u);
  EXPECT_EQ(s.batches.at(8).compute_infer.count, 1u);
  EXPECT_EQ(s.batches.at(8).compute_infer.ns, 500u);
  EXPECT_EQ(s.batches.at(1).compute_infer.count, 1u);
  EXPECT_EQ(s.batches.at(1).compute_infer.ns, 70u);
  EXPECT_EQ(s.batches.at(8).compute_input.count, 0u);  // per request, not per run
  EXPECT_EQ(s.fail.count, 0u);
}

TEST(ModelStatsTest, FailuresCountOnlyAsFail) {
  ModelStats stats;
  stats.RecordFailure(50, 7);
  stats.RecordFailure(25, 9);
  const ModelStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.fail.count, 2u);
  EXPECT_EQ(s.fail.ns, 75u);
  EXPECT_EQ(s.inference_count, 0u);
  EXPECT_EQ(s.success.count, 0u);
  EXPECT_EQ(s.last_inference_ms, 9u);
}

TEST(ModelStatsTest, ConcurrentRecordsAreAllCounted) {
  ModelStats stats;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&stats] {
      for (int j = 0; j < 1000; ++j) {
        stats.RecordSuccess(Timings(2, 1));
        stats.RecordExecution(2, 5);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(stats.Snapshot().inference_count, 8000u);
  EXPECT_EQ(stats.Snapshot().execution_count, 4000u);
}

}  // namespace
}  // namespace onyx::server
