#include "bench/serving/latency_log.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace onyx::bench {
namespace {

TEST(LatencyLogTest, NearestRankPercentiles) {
  LatencyLog log(1000);
  // 1..1000 µs in a scrambled order.
  for (int64_t i = 0; i < 1000; ++i) log.Add(((i * 7919) % 1000 + 1) * 1000);
  const LoadSummary s = Summarize(log, /*batch=*/4, /*seconds=*/2.0);
  EXPECT_EQ(s.items, 1000);
  EXPECT_EQ(s.rows, 4000);
  EXPECT_DOUBLE_EQ(s.items_per_s, 500.0);
  EXPECT_DOUBLE_EQ(s.rows_per_s, 2000.0);
  EXPECT_DOUBLE_EQ(s.p50_us, 500.0);   // ceil(0.5 * 1000) = rank 500
  EXPECT_DOUBLE_EQ(s.p99_us, 990.0);
  EXPECT_DOUBLE_EQ(s.p999_us, 999.0);
  EXPECT_DOUBLE_EQ(s.max_us, 1000.0);
  EXPECT_DOUBLE_EQ(s.mean_us, 500.5);
  EXPECT_EQ(s.dropped, 0);
}

TEST(LatencyLogTest, SmallLogRoundsRankUp) {
  LatencyLog log(3);
  for (int64_t ns : {3000, 1000, 2000}) log.Add(ns);
  const LoadSummary s = Summarize(log, 1, 1.0);
  EXPECT_DOUBLE_EQ(s.p50_us, 2.0);  // ceil(1.5) = rank 2
  EXPECT_DOUBLE_EQ(s.p99_us, 3.0);
}

TEST(LatencyLogTest, CountsBeyondCapacityAsDropped) {
  LatencyLog log(2);
  for (int64_t ns : {5000, 1000, 9000, 9000}) log.Add(ns);
  const LoadSummary s = Summarize(log, 1, 1.0);
  EXPECT_EQ(s.items, 4);
  EXPECT_EQ(s.dropped, 2);
  EXPECT_DOUBLE_EQ(s.max_us, 5.0);  // only the first two are kept
}

TEST(LatencyLogTest, ConcurrentAddsKeepEveryEntry) {
  LatencyLog log(4 * 10000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log] {
      for (int i = 0; i < 10000; ++i) log.Add(1000);
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<int64_t> kept = log.Sorted();
  ASSERT_EQ(kept.size(), 40000u);
  EXPECT_EQ(kept.front(), 1000);  // no slot left at its initial zero
}

TEST(LatencyLogTest, EmptyLogSummarizesToZeros) {
  LatencyLog log(8);
  const LoadSummary s = Summarize(log, 1, 1.0);
  EXPECT_EQ(s.items, 0);
  EXPECT_DOUBLE_EQ(s.p50_us, 0.0);
  EXPECT_DOUBLE_EQ(s.mean_us, 0.0);
}

}  // namespace
}  // namespace onyx::bench
