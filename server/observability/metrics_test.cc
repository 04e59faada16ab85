#include "server/observability/metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onyx/memory.h"

namespace onyx::server {
namespace {

using ::testing::HasSubstr;

TEST(MetricsTest, CountsRequestsByModelAndCode) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  (*metrics)->RecordRequest("mlp", absl::StatusCode::kOk, 0.002);
  (*metrics)->RecordRequest("mlp", absl::StatusCode::kOk, 0.004);
  (*metrics)->RecordRequest("mlp", absl::StatusCode::kInvalidArgument, 0.0001);
  (*metrics)->RecordRequest("", absl::StatusCode::kNotFound, 0.0001);
  const std::string text = (*metrics)->Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"OK\",model=\"mlp\"} 2"));
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"INVALID_ARGUMENT\",model=\"mlp\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_requests_total{code=\"NOT_FOUND\",model=\"\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_request_duration_seconds_count{model=\"mlp\"} 3"));
  // 0.002 and 0.004 are both <= 0.005; 0.0001 is in the first bucket.
  EXPECT_THAT(text,
              HasSubstr("onyx_request_duration_seconds_bucket{model=\"mlp\",le=\"0.0001\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("onyx_request_duration_seconds_bucket{model=\"mlp\",le=\"0.005\"} 3"));
  EXPECT_TRUE((*metrics)->ListeningPorts().empty());
}

TEST(MetricsTest, ObservesRequestsAndRowsPerBatch) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  (*metrics)->RecordBatch("mlp", 1, 3);
  (*metrics)->RecordBatch("mlp", 3, 8);
  const std::string text = (*metrics)->Serialize();
  EXPECT_THAT(text, HasSubstr("onyx_batch_requests_count{model=\"mlp\"} 2"));
  EXPECT_THAT(text, HasSubstr("onyx_batch_requests_bucket{model=\"mlp\",le=\"1\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_batch_requests_bucket{model=\"mlp\",le=\"4\"} 2"));
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_sum{model=\"mlp\"} 11"));
  EXPECT_THAT(text, HasSubstr("onyx_batch_rows_bucket{model=\"mlp\",le=\"4\"} 1"));
}

TEST(MetricsTest, ExportsTheEngineArenaAccounting) {
  auto metrics = Metrics::Create({});
  ASSERT_TRUE(metrics.ok());
  // Whatever the arena holds now, the exposition carries the same numbers.
  std::vector<onyx::ArenaStats> stats = onyx::GetArenaStats();
  ASSERT_FALSE(stats.empty());
  const std::string text = (*metrics)->Serialize();
  EXPECT_NE(text.find("onyx_arena_reserved_bytes{device=\"cpu\"} " + std::to_string(stats[0].reserved_bytes)),
            std::string::npos)
      << text;
  for (const char* name : {"onyx_arena_in_use_bytes", "onyx_arena_peak_in_use_bytes",
                           "onyx_arena_largest_free_block_bytes", "onyx_arena_allocations_total",
                           "onyx_arena_extends_total"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name), std::string::npos) << name;
  }
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
