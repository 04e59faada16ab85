// Profiling (Chrome trace), per-kernel statistics and IOBinding.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/logging.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

ModelBuilder TwoLayer() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 8}).Output("y", DataType::kFloat, {-1, 4});
  m.Initializer("w1", RandomFloatTensor({8, 8}, 1));
  m.Initializer("w2", RandomFloatTensor({8, 4}, 2));
  m.Node("MatMul", {"x", "w1"}, {"h"}, "fc1");
  m.Node("Relu", {"h"}, {"r"}, "act");
  m.Node("MatMul", {"r", "w2"}, {"y"}, "fc2");
  return m;
}

TEST(RunFeaturesTest, ProfileIsAChromeTraceOfTheProfiledRuns) {
  SessionOptions options;
  options.profile_file_prefix = ::testing::TempDir() + "/onyx_trace";
  auto session = InferenceSession::CreateFromBytes(TwoLayer().Serialize(), options);
  ASSERT_TRUE(session.ok());
  Feeds feeds = {{"x", Value(RandomFloatTensor({2, 8}, 3))}};
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());  // not profiled
  (*session)->StartProfiling(2);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
  EXPECT_EQ((*session)->profiled_runs(), 2);
  auto path = (*session)->EndProfiling();
  ASSERT_TRUE(path.ok()) << path.status();
  std::ifstream in(*path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string trace = text.str();
  EXPECT_EQ((*session)->profiled_runs(), 0);  // EndProfiling starts a new count
  // Two profiled runs of three nodes, plus one "run" event per run: eight
  // complete events.
  size_t events = 0;
  for (size_t at = trace.find("\"ph\":\"X\""); at != std::string::npos; at = trace.find("\"ph\":\"X\"", at + 1)) {
    ++events;
  }
  EXPECT_EQ(events, 8u);
  for (const char* field : {"\"traceEvents\"", "\"ts\":", "\"dur\":", "\"pid\":", "\"tid\":", "\"op_type\":\"MatMul\"",
                            "\"input_shapes\":\"[2,8],[8,8]\"", "MatMul 'fc1'"}) {
    EXPECT_NE(trace.find(field), std::string::npos) << field;
  }
  // The file parses as JSON (checked with Python's json module).
  std::string command = "/usr/bin/python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
                        "assert len(d['traceEvents']) == 8; "
                        "assert sum(e['cat'] == 'run' for e in d['traceEvents']) == 2\" " + *path;
  EXPECT_EQ(std::system(command.c_str()), 0);
}

TEST(RunFeaturesTest, KernelStatsCountEveryRun) {
  auto session = InferenceSession::CreateFromBytes(TwoLayer().Serialize(), {});
  ASSERT_TRUE(session.ok());
  Feeds feeds = {{"x", Value(RandomFloatTensor({2, 8}, 3))}};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
  auto stats = (*session)->kernel_stats();
  ASSERT_EQ(stats.size(), 3u);
  for (const auto& k : stats) {
    EXPECT_EQ(k.count, 5) << k.node;
    // Every run lands in exactly one latency bucket.
    ASSERT_EQ(k.bucket_counts.size(), kKernelLatencyBuckets);
    int64_t bucketed = 0;
    for (int64_t c : k.bucket_counts) bucketed += c;
    EXPECT_EQ(bucketed, 5) << k.node;
    EXPECT_GE(k.total_ns, k.max_ns);
    EXPECT_EQ(k.provider, "cpu");
  }
  EXPECT_EQ(stats[0].node, "MatMul 'fc1'");
  auto by_type = (*session)->op_type_stats();
  ASSERT_EQ(by_type.size(), 2u);
  EXPECT_EQ(by_type[0].op_type, "MatMul");
  EXPECT_EQ(by_type[0].count, 10);  // two MatMul nodes, five runs
  EXPECT_EQ(by_type[0].total_ns, stats[0].total_ns + stats[2].total_ns);
  EXPECT_EQ(by_type[1].op_type, "Relu");
  EXPECT_EQ(by_type[1].count, 5);
}

TEST(RunFeaturesTest, BoundOutputsAreWrittenInPlace) {
  auto session = InferenceSession::CreateFromBytes(TwoLayer().Serialize(), {});
  ASSERT_TRUE(session.ok());
  Tensor x = RandomFloatTensor({2, 8}, 4);
  std::vector<float> input(x.data<float>(), x.data<float>() + 16);
  std::vector<float> caller(8, -1.f);
  std::vector<Value> outputs = {Value(Tensor::Wrap(DataType::kFloat, {2, 4}, caller.data()))};
  Feeds feeds = {{"x", Value(Tensor::Wrap(DataType::kFloat, {2, 8}, input.data()))}};
  ASSERT_TRUE((*session)->RunWithBoundOutputs(RunOptions(), feeds, {"y"}, outputs).ok());
  EXPECT_EQ(outputs[0].tensor().raw(), caller.data()) << "the output must be the caller's buffer";
  auto reference = (*session)->Run(RunOptions(), {{"x", Value(x)}}, {"y"});
  ASSERT_TRUE(reference.ok());
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(caller[i], (*reference)[0].tensor().data<float>()[i]);

  std::vector<float> small(4);
  std::vector<Value> wrong = {Value(Tensor::Wrap(DataType::kFloat, {1, 4}, small.data()))};
  auto status = (*session)->RunWithBoundOutputs(RunOptions(), feeds, {"y"}, wrong);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("bound output 'y'"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

std::ostringstream& captured_log() {
  static std::ostringstream* out = new std::ostringstream();
  return *out;
}

std::shared_ptr<spdlog::logger> EngineLoggerForTest() { return EngineLogger(); }

TEST(RunFeaturesTest, RunLogLevelTraceLogsEveryNodeForThatRunOnly) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured_log());
  auto session = InferenceSession::CreateFromBytes(TwoLayer().Serialize(), {});
  ASSERT_TRUE(session.ok());
  EngineLoggerForTest()->sinks().push_back(sink);
  EngineLoggerForTest()->set_level(spdlog::level::warn);
  Feeds feeds = {{"x", Value(testing::RandomFloatTensor({2, 8}, 3))}};
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
  EXPECT_EQ(captured_log().str().find("MatMul 'fc1'"), std::string::npos) << "default run logs no nodes at warn";
  RunOptions traced;
  traced.run_tag = "traced";
  traced.log_level = LogLevel::kTrace;
  ASSERT_TRUE((*session)->Run(traced, feeds, {}).ok());
  const std::string log = captured_log().str();
  EXPECT_NE(log.find("run 'traced': MatMul 'fc1' on cpu took"), std::string::npos) << log;
  EXPECT_NE(log.find("run 'traced': MatMul 'fc2' on cpu took"), std::string::npos) << log;
  EngineLoggerForTest()->sinks().pop_back();
}

}  // namespace
}  // namespace onyx
