#include "server/observability/metrics.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onyx/memory.h"
#include "onyx/session.h"
#include "server/observability/arena_collector.h"
#include "server/observability/collector_util.h"
#include "server/observability/process_collector.h"
#include "tests/util/model_builder.h"

namespace onyx::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsTest, CountsRequestsByModelVersionAndCode) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  (*metrics)->RecordRequest("mlp", "1", absl::StatusCode::kOk, 0.002);
  (*metrics)->RecordRequest("mlp", "1", absl::StatusCode::kOk, 0.004);
  (*metrics)->RecordRequest("mlp", "", absl::StatusCode::kInvalidArgument, 0.00004);
  (*metrics)->RecordRequest("", "", absl::StatusCode::kNotFound, 0.0001);
  const std::string text = (*metrics)->Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"OK\",model=\"mlp\",version=\"1\"} 2"));
  EXPECT_THAT(
      text,
      HasSubstr("onyx_requests_total{code=\"INVALID_ARGUMENT\",model=\"mlp\",version=\"\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"NOT_FOUND\",model=\"\",version=\"\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("onyx_request_duration_seconds_count{model=\"mlp\",version=\"1\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("onyx_request_duration_seconds_sum{model=\"mlp\",version=\"1\"} 0.006"));
  // 40 µs is in the first bucket (50 µs); 0.002 and 0.004 both <= 0.005.
  EXPECT_THAT(
      text,
      HasSubstr("onyx_request_duration_seconds_bucket{model=\"mlp\",version=\"\",le=\"5e-05\"} 1"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "onyx_request_duration_seconds_bucket{model=\"mlp\",version=\"1\",le=\"0.001\"} 0"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "onyx_request_duration_seconds_bucket{model=\"mlp\",version=\"1\",le=\"0.005\"} 2"));
  EXPECT_THAT(
      text,
      HasSubstr("onyx_request_duration_seconds_bucket{model=\"mlp\",version=\"1\",le=\"10\"} 2"));
  EXPECT_TRUE((*metrics)->ListeningPorts().empty());
}

TEST(MetricsTest, AVersionsSeriesLeaveWithItsLastHold) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  Metrics& m = **metrics;
  std::shared_ptr<void> first = m.HoldVersionSeries("mlp", "3");
  std::shared_ptr<void> second = m.HoldVersionSeries("mlp", "3");  // a reload of the same version
  std::shared_ptr<void> other = m.HoldVersionSeries("mlp", "4");
  m.RecordRequest("mlp", "3", absl::StatusCode::kOk, 0.001);
  m.RecordRequest("mlp", "3", absl::ResourceExhaustedError("full"), 0.001);
  m.RecordTiming("mlp", "3", 0.0001, 0.001);
  m.RecordBatch("mlp", "3", 2, 5);
  m.RecordRequest("mlp", "4", absl::StatusCode::kOk, 0.001);
  m.RecordRequest("mlp", "", absl::StatusCode::kNotFound, 0.001);
  first.reset();
  std::string text = m.Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_count{model=\"mlp\",version=\"3\"} 1"));
  second.reset();
  text = m.Serialize();
  for (const char* name :
       {"onyx_requests_total", "onyx_request_duration_seconds_count",
        "onyx_queue_duration_seconds_count", "onyx_compute_duration_seconds_count",
        "onyx_batch_requests_count", "onyx_batch_rows_count"}) {
    EXPECT_THAT(text, Not(HasSubstr(std::string(name) + "{model=\"mlp\",version=\"3\"}"))) << name;
  }
  EXPECT_THAT(text, Not(HasSubstr("version=\"3\"")));
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"OK\",model=\"mlp\",version=\"4\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("onyx_requests_total{code=\"NOT_FOUND\",model=\"mlp\",version=\"\"} 1"));
  // Held again (version 3 loaded anew), it counts from 0.
  std::shared_ptr<void> again = m.HoldVersionSeries("mlp", "3");
  m.RecordRequest("mlp", "3", absl::StatusCode::kOk, 0.001);
  EXPECT_THAT(m.Serialize(),
              HasSubstr("onyx_requests_total{code=\"OK\",model=\"mlp\",version=\"3\"} 1"));
}

TEST(MetricsTest, CountsRejectionsByReasonFromTheFinalStatus) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const absl::Status full = Rejected(absl::ResourceExhaustedError("queue full"),
                                     RejectionReason::kQueueFull, absl::Milliseconds(5));
  (*metrics)->RecordRequest("mlp", "1", full, 0.0001);
  (*metrics)->RecordRequest("mlp", "1", full, 0.0001);
  (*metrics)->RecordRequest(
      "mlp", "1",
      Rejected(absl::DeadlineExceededError("late"), RejectionReason::kDeadlineBeforeRun), 0.01);
  // Not a load refusal: counted by code only.
  (*metrics)->RecordRequest("mlp", "1", absl::ResourceExhaustedError("arena limit"), 0.01);
  (*metrics)->RecordRequest("mlp", "1", absl::OkStatus(), 0.01);
  const std::string text = (*metrics)->Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_request_rejections_total{model=\"mlp\",reason=\"queue_full\","
                              "version=\"1\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("onyx_request_rejections_total{model=\"mlp\",reason=\"deadline_before_"
                        "run\",version=\"1\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"RESOURCE_EXHAUSTED\",model=\"mlp\","
                              "version=\"1\"} 3"));
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"DEADLINE_EXCEEDED\",model=\"mlp\","
                              "version=\"1\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"OK\",model=\"mlp\",version=\"1\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("reason=\"model_inflight_bytes\"")));
}

TEST(MetricsTest, ObservesQueueAndComputeTimePerRequest) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  (*metrics)->RecordTiming("cnn", "2", 0.0002, 0.003);
  (*metrics)->RecordTiming("cnn", "2", 0.0, 0.02);
  const std::string text = (*metrics)->Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_queue_duration_seconds_count{model=\"cnn\",version=\"2\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("onyx_queue_duration_seconds_sum{model=\"cnn\",version=\"2\"} 0.0002"));
  EXPECT_THAT(
      text,
      HasSubstr("onyx_queue_duration_seconds_bucket{model=\"cnn\",version=\"2\",le=\"5e-05\"} 1"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "onyx_queue_duration_seconds_bucket{model=\"cnn\",version=\"2\",le=\"0.00025\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("onyx_compute_duration_seconds_count{model=\"cnn\",version=\"2\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("onyx_compute_duration_seconds_sum{model=\"cnn\",version=\"2\"} 0.023"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "onyx_compute_duration_seconds_bucket{model=\"cnn\",version=\"2\",le=\"0.005\"} 1"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "onyx_compute_duration_seconds_bucket{model=\"cnn\",version=\"2\",le=\"0.025\"} 2"));
}

TEST(MetricsTest, ObservesRequestsAndRowsPerBatch) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  (*metrics)->RecordBatch("mlp", "1", 1, 3);
  (*metrics)->RecordBatch("mlp", "1", 3, 8);
  (*metrics)->RecordBatch("mlp", "2", 2, 2);
  const std::string text = (*metrics)->Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_batch_requests_count{model=\"mlp\",version=\"1\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("onyx_batch_requests_bucket{model=\"mlp\",version=\"1\",le=\"1\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("onyx_batch_requests_bucket{model=\"mlp\",version=\"1\",le=\"4\"} 2"));
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_sum{model=\"mlp\",version=\"1\"} 11"));
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_bucket{model=\"mlp\",version=\"1\",le=\"4\"} 1"));
  // Versions served side by side keep their own series.
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_sum{model=\"mlp\",version=\"2\"} 2"));
}

// The cached series: every thread's records land in the one series of their
// labels, and a series appears only once something was recorded in it.
TEST(MetricsTest, CachedSeriesCountEveryRecordFromManyThreads) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  Metrics* m = metrics->get();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([m, t] {
      for (int i = 0; i < 1000; ++i) {
        m->RecordRequest("mlp", "1", absl::StatusCode::kOk, 0.001);
        if (i % 10 == 0) m->RecordRequest("mlp", "2", absl::StatusCode::kUnavailable, 0.001);
        m->RecordTiming("mlp", "1", 0.0, 0.001);
        m->RecordBatch(t % 2 == 0 ? "mlp" : "cnn", "1", 2, 4);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string text = m->Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"OK\",model=\"mlp\",version=\"1\"} 4000"));
  EXPECT_THAT(
      text, HasSubstr("onyx_requests_total{code=\"UNAVAILABLE\",model=\"mlp\",version=\"2\"} 400"));
  EXPECT_THAT(text, Not(HasSubstr("code=\"OK\",model=\"mlp\",version=\"2\"")));
  EXPECT_THAT(text,
              HasSubstr("onyx_request_duration_seconds_count{model=\"mlp\",version=\"1\"} 4000"));
  EXPECT_THAT(text,
              HasSubstr("onyx_request_duration_seconds_count{model=\"mlp\",version=\"2\"} 400"));
  EXPECT_THAT(text,
              HasSubstr("onyx_queue_duration_seconds_count{model=\"mlp\",version=\"1\"} 4000"));
  // Version 2 only had requests: no queue or compute series for it.
  EXPECT_THAT(text,
              Not(HasSubstr("onyx_queue_duration_seconds_count{model=\"mlp\",version=\"2\"}")));
  EXPECT_THAT(text,
              Not(HasSubstr("onyx_compute_duration_seconds_count{model=\"mlp\",version=\"2\"}")));
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_count{model=\"mlp\",version=\"1\"} 2000"));
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_sum{model=\"cnn\",version=\"1\"} 8000"));
}

// A session of arena group "arenatest/7" (as a server's model version uses):
// its arena's numbers appear under model="arenatest", version="7" and go with
// the session and its outputs.
TEST(MetricsTest, ExportsEachModelVersionsArena) {
  onyx::testing::ModelBuilder m(13);
  m.Input("x", onyx::DataType::kFloat, {4, 64});
  m.Output("y", onyx::DataType::kFloat, {4, 64});
  m.Node("Relu", {"x"}, {"y"});
  onyx::SessionOptions options;
  options.enable_mem_pattern = false;
  options.arena_group = "arenatest/7";
  auto session = onyx::InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  onyx::Tensor x = onyx::Tensor::Allocate(onyx::DataType::kFloat, {4, 64});
  auto y = (*session)->Run(onyx::RunOptions(), {{"x", onyx::Value(x)}}, {});
  ASSERT_TRUE(y.ok()) << y.status();

  auto metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok());
  std::string text = (*metrics)->Serialize();
  const std::string labels = "device=\"cpu\",model=\"arenatest\",version=\"7\"";
  // One run of one Relu: one 1 KiB output chunk, held by `y`.
  EXPECT_THAT(text, HasSubstr("onyx_arena_allocations_total{" + labels + "} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_arena_in_use_bytes{" + labels + "} 1024"));
  const onyx::ArenaStats* stats = nullptr;
  std::vector<onyx::ArenaStats> all = onyx::GetArenaStats();
  for (const onyx::ArenaStats& s : all) {
    if (s.group == "arenatest/7") stats = &s;
  }
  ASSERT_NE(stats, nullptr);
  EXPECT_THAT(text, HasSubstr("onyx_arena_reserved_bytes{" + labels + "} " +
                              std::to_string(stats->reserved_bytes)));
  for (const char* name : {"onyx_arena_in_use_bytes", "onyx_arena_peak_in_use_bytes",
                           "onyx_arena_largest_free_block_bytes", "onyx_arena_allocations_total",
                           "onyx_arena_extends_total", "onyx_arena_bin_chunks"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name), std::string::npos) << name;
  }
  // One in-use and one free series per bin: bin b holds chunks of >= 256 << b bytes.
  // The 1 KiB output chunk is in bin 2 (1024 <= size < 2048).
  ASSERT_EQ(stats->bin_chunks_in_use.size(), 21u);
  EXPECT_THAT(text, HasSubstr("onyx_arena_bin_chunks{" + labels +
                              ",bin_min_bytes=\"1024\",state=\"in_use\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_arena_bin_chunks{" + labels +
                              ",bin_min_bytes=\"256\",state=\"free\"} " +
                              std::to_string(stats->bin_chunks_free[0])));
  EXPECT_THAT(text, HasSubstr("onyx_arena_bin_chunks{" + labels +
                              ",bin_min_bytes=\"268435456\",state=\"in_use\"} 0"));

  session->reset();
  y->clear();
  text = (*metrics)->Serialize();
  EXPECT_THAT(text, Not(HasSubstr("model=\"arenatest\"")));
}

TEST(MetricsTest, ArenaGroupSplitsIntoModelAndVersion) {
  EXPECT_EQ(SplitArenaGroup("mlp/1"), std::make_pair(std::string("mlp"), std::string("1")));
  EXPECT_EQ(SplitArenaGroup("a/b/12"), std::make_pair(std::string("a/b"), std::string("12")));
  EXPECT_EQ(SplitArenaGroup(""), std::make_pair(std::string(""), std::string("")));
  EXPECT_EQ(SplitArenaGroup("solo"), std::make_pair(std::string("solo"), std::string("")));
}

TEST(MetricsTest, ExportsResidentMemoryAndBuildInfo) {
  Metrics::Options options;
  options.version = "1.2.3";
  auto metrics = Metrics::Create(options);
  ASSERT_TRUE(metrics.ok());
  absl::StatusOr<int64_t> rss = ResidentMemoryBytes();
  ASSERT_TRUE(rss.ok()) << rss.status();
  // A running test binary holds at least a megabyte of code and data resident.
  EXPECT_GT(*rss, 1 << 20);
  const std::string text = (*metrics)->Serialize();
  EXPECT_THAT(text, HasSubstr("# TYPE onyx_process_resident_memory_bytes gauge\n"
                              "onyx_process_resident_memory_bytes "));
  EXPECT_THAT(text, HasSubstr("onyx_build_info{version=\"1.2.3\",compiler=\""));
  EXPECT_THAT(text, HasSubstr(",cxx_standard=\"" + std::to_string(__cplusplus) + "\"} 1\n"));
}

// A collectable with one fixed gauge.
class FixedCollectable final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    auto family = MakeFamily("onyx_test_value", "test", prometheus::MetricType::Gauge);
    AddSample(family, {{"k", "v"}}, 42);
    return {family};
  }
};

TEST(MetricsTest, AddedCollectablesAreReadUntilTheRegistrationGoes) {
  Metrics::Options options;
  options.address = "127.0.0.1:0";  // the exposer's list is updated as well
  auto metrics = Metrics::Create(options);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  std::unique_ptr<CollectableRegistration> registration =
      (*metrics)->AddCollectable(std::make_shared<FixedCollectable>());
  EXPECT_THAT((*metrics)->Serialize(), HasSubstr("onyx_test_value{k=\"v\"} 42"));
  registration.reset();
  EXPECT_THAT((*metrics)->Serialize(), Not(HasSubstr("onyx_test_value")));
}

TEST(MetricsTest, ListenerThatCannotBindIsUnavailable) {
  Metrics::Options options;
  options.address = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<Metrics>> first = Metrics::Create(options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ((*first)->ListeningPorts().size(), 1u);
  const int port = (*first)->ListeningPorts()[0];
  EXPECT_GT(port, 0);

  options.address = "127.0.0.1:" + std::to_string(port);
  absl::StatusOr<std::unique_ptr<Metrics>> second = Metrics::Create(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr(options.address));
}

}  // namespace
}  // namespace onyx::server
