#include "server/observability/model_collector.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"

namespace onyx::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Text(const std::vector<ModelStatus>& index, const std::vector<ModelSnapshot>& models) {
  return prometheus::TextSerializer().Serialize(ModelFamilies(index, models));
}

onyx::KernelStats Stats(std::string node, std::string op_type, int64_t count, int64_t total_ns, int64_t max_ns) {
  onyx::KernelStats k;
  k.node = std::move(node);
  k.op_type = std::move(op_type);
  k.provider = "cpu";
  k.count = count;
  k.total_ns = total_ns;
  k.max_ns = max_ns;
  return k;
}

TEST(ModelCollectorTest, StateIsOneForTheCurrentStateOnly) {
  ModelStatus ready{"mlp", "3", ModelState::kReady, ""};
  ModelStatus failed{"cnn", "", ModelState::kUnavailable, "bad graph"};
  const std::string text = Text({ready, failed}, {});
  EXPECT_THAT(text, HasSubstr("onyx_model_state{model=\"mlp\",version=\"3\",state=\"READY\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_model_state{model=\"mlp\",version=\"3\",state=\"LOADING\"} 0"));
  EXPECT_THAT(text, HasSubstr("onyx_model_state{model=\"mlp\",version=\"3\",state=\"UNAVAILABLE\"} 0"));
  EXPECT_THAT(text, HasSubstr("onyx_model_state{model=\"mlp\",version=\"3\",state=\"UNLOADING\"} 0"));
  EXPECT_THAT(text, HasSubstr("onyx_model_state{model=\"cnn\",version=\"\",state=\"UNAVAILABLE\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_model_state{model=\"cnn\",version=\"\",state=\"READY\"} 0"));
}

TEST(ModelCollectorTest, ExportsSchedulerLoadAndPartitionNumbers) {
  ModelSnapshot m;
  m.name = "mlp";
  m.version = "1";
  m.load_seconds = 0.25;
  m.queue_depth = 3;
  m.in_flight = 5;
  m.buckets = {{"1", 2, 3, 4}, {"8", 0, 1, 0}};
  const std::string text = Text({}, {m});
  EXPECT_THAT(text, HasSubstr("onyx_model_load_duration_seconds{model=\"mlp\",version=\"1\"} 0.25"));
  EXPECT_THAT(text, HasSubstr("onyx_queue_depth{model=\"mlp\",version=\"1\"} 3"));
  EXPECT_THAT(text, HasSubstr("onyx_inflight_requests{model=\"mlp\",version=\"1\"} 5"));
  EXPECT_THAT(text, HasSubstr("onyx_model_cpu_fallback_nodes{model=\"mlp\",version=\"1\",bucket=\"1\"} 2"));
  EXPECT_THAT(text, HasSubstr("onyx_model_partitions{model=\"mlp\",version=\"1\",bucket=\"1\"} 3"));
  EXPECT_THAT(text, HasSubstr("onyx_model_memcpy_nodes{model=\"mlp\",version=\"1\",bucket=\"1\"} 4"));
  EXPECT_THAT(text, HasSubstr("onyx_model_cpu_fallback_nodes{model=\"mlp\",version=\"1\",bucket=\"8\"} 0"));
  EXPECT_THAT(text, HasSubstr("onyx_model_partitions{model=\"mlp\",version=\"1\",bucket=\"8\"} 1"));
}

TEST(ModelCollectorTest, KernelHistogramIsCumulativeOverTheEngineBuckets) {
  ModelSnapshot m;
  m.name = "cnn";
  m.version = "2";
  onyx::KernelStats conv = Stats("", "Conv", 6, 3'000'000'000, 2'000'000'000);
  // Bounds: 1 µs, 2.5 µs, 5 µs, ...; last count is +Inf.
  conv.bucket_counts[0] = 1;   // <= 1 µs
  conv.bucket_counts[2] = 2;   // <= 5 µs
  conv.bucket_counts[18] = 2;  // <= 1 s
  conv.bucket_counts[19] = 1;  // > 1 s
  m.op_types = {conv};
  const std::string text = Text({}, {m});
  const std::string labels = "model=\"cnn\",version=\"2\",op_type=\"Conv\",provider=\"cpu\"";
  EXPECT_THAT(text, HasSubstr("# TYPE onyx_kernel_duration_seconds histogram"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_count{" + labels + "} 6"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_sum{" + labels + "} 3"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_bucket{" + labels + ",le=\"1e-06\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_bucket{" + labels + ",le=\"2.5e-06\"} 1"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_bucket{" + labels + ",le=\"5e-06\"} 3"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_bucket{" + labels + ",le=\"0.5\"} 3"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_bucket{" + labels + ",le=\"1\"} 5"));
  EXPECT_THAT(text, HasSubstr("onyx_kernel_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} 6"));
}

TEST(ModelCollectorTest, ExportsOnlyTheSlowestNodesByMean) {
  ModelSnapshot m;
  m.name = "mlp";
  m.version = "1";
  // Means: a 1000 ns, b 2000, c 500, d 4000, e 3000, f 1500, never 0 runs.
  m.nodes = {Stats("a", "Relu", 2, 2000, 1500),  Stats("b", "Gemm", 1, 2000, 2000),
             Stats("c", "Add", 4, 2000, 900),    Stats("d", "MatMul", 2, 8000, 5000),
             Stats("e", "Softmax", 1, 3000, 3000), Stats("f", "Mul", 2, 3000, 2000),
             Stats("never", "Gemm", 0, 0, 0)};
  const std::string text = Text({}, {m});
  EXPECT_THAT(text, HasSubstr("onyx_node_mean_seconds{model=\"mlp\",version=\"1\",node=\"d\",op_type=\"MatMul\","
                              "provider=\"cpu\"} 4e-06"));
  EXPECT_THAT(text, HasSubstr("onyx_node_max_seconds{model=\"mlp\",version=\"1\",node=\"d\",op_type=\"MatMul\","
                              "provider=\"cpu\"} 5e-06"));
  for (const char* node : {"e", "b", "f", "a"}) {
    EXPECT_THAT(text, HasSubstr(std::string("node=\"") + node + "\"")) << node;
  }
  // kTopNodes = 5: the sixth slowest (c) and the node that never ran are left out.
  EXPECT_THAT(text, Not(HasSubstr("node=\"c\"")));
  EXPECT_THAT(text, Not(HasSubstr("node=\"never\"")));
}

}  // namespace
}  // namespace onyx::server
