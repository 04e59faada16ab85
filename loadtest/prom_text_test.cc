#include "loadtest/prom_text.h"

#include <cmath>

#include "gtest/gtest.h"
#include "loadtest/waterfall.h"

namespace onyx::load {
namespace {

constexpr char kText[] = R"(# HELP onyx_request_duration_seconds x
# TYPE onyx_request_duration_seconds histogram
onyx_request_duration_seconds_bucket{model="mlp",version="1",le="0.001"} 10
onyx_request_duration_seconds_bucket{model="mlp",version="1",le="0.0025"} 90
onyx_request_duration_seconds_bucket{model="mlp",version="1",le="0.005"} 100
onyx_request_duration_seconds_bucket{model="mlp",version="1",le="+Inf"} 100
onyx_request_duration_seconds_sum{model="mlp",version="1"} 0.2
onyx_request_duration_seconds_count{model="mlp",version="1"} 100
onyx_request_duration_seconds_bucket{model="mlp",version="2",le="0.001"} 5
onyx_request_duration_seconds_bucket{model="mlp",version="2",le="+Inf"} 5
onyx_request_duration_seconds_count{model="mlp",version="2"} 5
onyx_queue_depth{model="mlp",version="1"} 3
onyx_arena_in_use_bytes{device="cpu",model="mlp",version="1"} 4096
onyx_arena_in_use_bytes{device="cpu",model="",version=""} 999
onyx_model_cpu_fallback_nodes{model="mlp",version="1",bucket="1"} 2
onyx_model_cpu_fallback_nodes{model="mlp",version="1",bucket="8"} 2
onyx_process_resident_memory_bytes 123456
weird line without value
onyx_requests_total{model="mlp",version="1",code="OK"} 7 1700000000000
)";

TEST(PromTextTest, ParsesModelSeriesSummingVersions) {
  MetricsSnapshot s = ParseMetrics(kText);
  ASSERT_EQ(s.models.count("mlp"), 1u);
  EXPECT_EQ(s.models.size(), 1u);  // model="" is the engine's shared arena, not a model
  const ModelMetrics& m = s.models["mlp"];
  EXPECT_EQ(m.request.le.size(), 4u);
  EXPECT_EQ(m.request.cumulative[0], 15);  // versions 1 and 2 at le=0.001
  EXPECT_EQ(m.request.cumulative.back(), 105);
  EXPECT_EQ(m.request.count, 105);
  EXPECT_EQ(m.queue_depth, 3);
  EXPECT_EQ(m.arena_in_use, 4096);
  EXPECT_EQ(m.fallback_nodes, 2);  // per session, not summed over buckets
  EXPECT_EQ(m.requests_total, 7);
  EXPECT_EQ(s.process_rss, 123456);
}

TEST(PromTextTest, QuantileInterpolatesInsideTheBucketLikePrometheus) {
  ServerHistogram h = ParseMetrics(kText).models["mlp"].request;
  double low, high;
  // 105 samples: rank 52.5 lies in (1ms, 2.5ms], which holds 75 (15 below):
  // 1ms + 1.5ms * (52.5 - 15) / 75.
  EXPECT_NEAR(HistogramQuantile(h, 0.5, &low, &high), 0.001 + 0.0015 * 37.5 / 75, 1e-12);
  EXPECT_EQ(low, 0.001);
  EXPECT_EQ(high, 0.0025);
  EXPECT_NEAR(HistogramQuantile(h, 0.9, &low, &high), 0.0025 + 0.0025 * (94.5 - 90) / 10, 1e-12);
  // Past the last finite bound: that bound, as histogram_quantile answers.
  EXPECT_EQ(HistogramQuantile(h, 0.99, &low, &high), 0.005);
  EXPECT_TRUE(std::isinf(high));
  ServerHistogram before = h;
  for (double& c : before.cumulative) c /= 5;
  before.count /= 5;
  ServerHistogram d = HistogramDelta(h, before);
  EXPECT_EQ(d.cumulative.back(), 84);
  EXPECT_EQ(d.count, 84);
  EXPECT_EQ(HistogramQuantile(ServerHistogram(), 0.5, &low, &high), 0);
}

TEST(WaterfallTest, PartsAddUpToTheClientMean) {
  ModelLevelResult m;
  Histogram s;
  s.RecordN(2'000'000, 10);  // client: 2 ms each
  m.service = HistogramData::From(s);
  m.server.have_stats = true;
  m.server.success_count = 10;
  m.server.success_ns = 10 * 1.5e6;
  m.server.queue_ns = 10 * 0.5e6;
  m.server.compute_infer_ns = 10 * 0.8e6;
  Waterfall w = ComputeWaterfall(m);
  ASSERT_TRUE(w.valid);
  EXPECT_DOUBLE_EQ(w.network_ns, 0.5e6);
  EXPECT_DOUBLE_EQ(w.queue_ns, 0.5e6);
  EXPECT_DOUBLE_EQ(w.compute_ns, 0.8e6);
  EXPECT_DOUBLE_EQ(w.other_ns, 0.2e6);
  EXPECT_DOUBLE_EQ(w.network_ns + w.queue_ns + w.compute_ns + w.other_ns, w.client_ns);
}

}  // namespace
}  // namespace onyx::load
