#include "loadtest/histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace onyx::load {
namespace {

// Nearest-rank percentile of sorted values, computed independently.
int64_t Exact(const std::vector<int64_t>& sorted, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void ExpectPercentilesClose(std::vector<int64_t> values, const char* what) {
  Histogram h;
  for (int64_t v : values) h.Record(v);
  std::sort(values.begin(), values.end());
  for (double q : {0.01, 0.1, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999}) {
    const double want = static_cast<double>(Exact(values, q));
    const double got = static_cast<double>(h.Percentile(q));
    // 0.1% of the exact value, or 1 ns where values are tiny.
    EXPECT_LE(std::abs(got - want), std::max(1.0, 0.001 * want)) << what << " q=" << q;
  }
  EXPECT_EQ(h.Percentile(1.0), values.back()) << what;
  EXPECT_EQ(h.min(), values.front()) << what;
  EXPECT_EQ(h.max(), values.back()) << what;
  EXPECT_EQ(h.count(), static_cast<int64_t>(values.size()));
}

TEST(HistogramTest, PercentilesWithinATenthOfAPercentOfExactOnLogNormalData) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(2e6), 1.5);  // around 2 ms, long tail
  std::vector<int64_t> values(200000);
  for (auto& v : values) v = static_cast<int64_t>(dist(rng));
  ExpectPercentilesClose(values, "lognormal");
}

TEST(HistogramTest, PercentilesWithinATenthOfAPercentOfExactOnUniformAndBimodalData) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> uniform(1, int64_t{3600} * 1'000'000'000);  // 1 ns .. 1 h
  std::vector<int64_t> values(100000);
  for (auto& v : values) v = uniform(rng);
  ExpectPercentilesClose(values, "uniform");

  // 99% fast (50-150 us), 1% stalled (0.9-1.1 s): the coordinated-omission shape.
  std::uniform_int_distribution<int64_t> fast(50'000, 150'000), slow(900'000'000, 1'100'000'000);
  std::uniform_real_distribution<double> coin(0, 1);
  for (auto& v : values) v = coin(rng) < 0.99 ? fast(rng) : slow(rng);
  ExpectPercentilesClose(values, "bimodal");

  // Small values, inside the exact linear range.
  std::uniform_int_distribution<int64_t> small(0, 3000);
  for (auto& v : values) v = small(rng);
  ExpectPercentilesClose(values, "small");
}

TEST(HistogramTest, BucketsTileTheRangeWithoutGapsAndStayNarrow) {
  for (int i = 1; i < Histogram::kBucketCount; ++i) {
    ASSERT_EQ(Histogram::LowerBound(i), Histogram::LowerBound(i - 1) + Histogram::Width(i - 1)) << i;
  }
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{2047}, int64_t{2048}, int64_t{2049}, int64_t{4095}, int64_t{4096},
                    int64_t{1'000'000}, int64_t{999'999'999}, int64_t{3'600'000'000'000}}) {
    const int i = Histogram::IndexOf(v);
    EXPECT_LE(Histogram::LowerBound(i), v);
    EXPECT_LT(v, Histogram::LowerBound(i) + Histogram::Width(i));
    EXPECT_LE(static_cast<double>(Histogram::Width(i)), std::max(1.0, static_cast<double>(v) / 1024.0)) << v;
  }
  // One hour fits below the last bucket; beyond the range values clamp.
  EXPECT_LT(Histogram::IndexOf(int64_t{3600} * 1'000'000'000), Histogram::kBucketCount - 1);
  EXPECT_EQ(Histogram::IndexOf(int64_t{1} << 60), Histogram::kBucketCount - 1);
}

TEST(HistogramTest, MergeEqualsRecordingEverythingInOne) {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> dist(1.0 / 1e6);
  Histogram a, b, all;
  for (int i = 0; i < 50000; ++i) {
    const int64_t v = static_cast<int64_t>(dist(rng));
    (i % 3 ? a : b).Record(v);
    all.Record(v);
  }
  Histogram merged;
  merged.Merge(a);
  merged.Merge(b);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_DOUBLE_EQ(merged.sum(), all.sum());
  EXPECT_EQ(merged.Sparse(), all.Sparse());
}

TEST(HistogramTest, ResetForgetsAndSparseRoundTrips) {
  Histogram h;
  h.RecordN(5000, 3);
  h.Record(7'000'000);
  EXPECT_EQ(h.count(), 4);
  EXPECT_DOUBLE_EQ(h.mean(), (3 * 5000.0 + 7e6) / 4);
  EXPECT_NEAR(h.Percentile(0.5), 5000, 2);  // 5000 sits in a bucket 4 ns wide
  Histogram copy;
  copy.AddSparse(h.Sparse(), h.min(), h.max(), h.sum());
  EXPECT_EQ(copy.Sparse(), h.Sparse());
  EXPECT_EQ(copy.Percentile(0.99), h.Percentile(0.99));
  h.Reset();
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.Percentile(0.99), 0);
  EXPECT_TRUE(h.Sparse().empty());
  h.Record(-5);  // a clock step backwards counts as zero, not as garbage
  EXPECT_EQ(h.min(), 0);
}

TEST(HistogramTest, ShareAtOrBelowCountsWholeBuckets) {
  Histogram h;
  for (int i = 1; i <= 100; ++i) h.Record(i * 1'000'000);  // 1..100 ms
  EXPECT_NEAR(h.ShareAtOrBelow(10'000'000), 0.10, 1e-9);
  EXPECT_NEAR(h.ShareAtOrBelow(500'000), 0.0, 1e-9);
  EXPECT_NEAR(h.ShareAtOrBelow(200'000'000), 1.0, 1e-9);
}

}  // namespace
}  // namespace onyx::load
