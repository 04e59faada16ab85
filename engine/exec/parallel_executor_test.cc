// Lanes and cross-lane waits: a slow producer on the test device's own thread
// and a consumer on the CPU lane; random DAGs run in parallel equal sequential.
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "exec/profiler.h"
#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;
using testing::RandomFloatTensor;

TEST(ParallelExecutorTest, ConsumerOnCpuLaneNeverRunsBeforeSlowDeviceProducer) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {4, 16}).Output("y", DataType::kFloat, {4, 16});
  m.Node("Relu", {"x"}, {"r"}, "slow_relu");    // test device, 200 µs late
  m.Node("Softmax", {"r"}, {"y"}, "consumer");  // CPU lane
  SessionOptions options;
  options.providers = {"test:ops=Relu;delay_us=200"};
  options.profile_file_prefix = ::testing::TempDir() + "/lanes";
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  SessionOptions cpu_only;
  auto reference = InferenceSession::CreateFromBytes(m.Serialize(), cpu_only);
  ASSERT_TRUE(reference.ok());
  Feeds feeds = {{"x", Value(RandomFloatTensor({4, 16}, 1))}};
  auto expected = (*reference)->Run(RunOptions(), feeds, {});
  ASSERT_TRUE(expected.ok());
  (*session)->StartProfiling(1000);
  for (int i = 0; i < 1000; ++i) {
    auto out = (*session)->Run(RunOptions(), feeds, {});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int k = 0; k < 64; ++k) {
      ASSERT_EQ((*out)[0].tensor().data<float>()[k], (*expected)[0].tensor().data<float>()[k]) << "run " << i;
    }
  }
  // Every consumer event starts after the copy back from the device ended.
  auto path = (*session)->EndProfiling();
  ASSERT_TRUE(path.ok());
  std::ifstream in(*path);
  std::string line;
  std::vector<std::pair<int64_t, int64_t>> copies, consumers;  // (start, end)
  while (std::getline(in, line)) {
    auto number = [&](const char* key) {
      size_t at = line.find(key);
      return at == std::string::npos ? int64_t{-1} : std::stoll(line.substr(at + std::strlen(key)));
    };
    int64_t ts = number("\"ts\":"), dur = number("\"dur\":");
    if (ts < 0) continue;
    if (line.find("MemcpyToHost") != std::string::npos) copies.emplace_back(ts, ts + dur);
    if (line.find("consumer") != std::string::npos) consumers.emplace_back(ts, ts + dur);
  }
  ASSERT_EQ(copies.size(), 1000u);
  ASSERT_EQ(consumers.size(), 1000u);
  for (size_t i = 0; i < consumers.size(); ++i) EXPECT_GE(consumers[i].first, copies[i].second) << "run " << i;
}

// A random DAG of element-wise ops over [3, 5] tensors.
ModelBuilder RandomDag(uint32_t seed) {
  std::mt19937 rng(seed);
  ModelBuilder m(13);
  m.Input("x0", DataType::kFloat, {3, 5}).Input("x1", DataType::kFloat, {3, 5});
  std::vector<std::string> values = {"x0", "x1"};
  std::vector<int> uses(2, 0);
  const char* unary[] = {"Relu", "Abs", "Neg", "Sigmoid", "Tanh"};
  const char* binary[] = {"Add", "Mul", "Sub", "Max"};
  int nodes = 10 + rng() % 30;
  for (int i = 0; i < nodes; ++i) {
    std::string out = "v" + std::to_string(i);
    int a = rng() % values.size();
    if (rng() % 2) {
      m.Node(unary[rng() % 5], {values[a]}, {out});
      ++uses[a];
    } else {
      int b = rng() % values.size();
      m.Node(binary[rng() % 4], {values[a], values[b]}, {out});
      ++uses[a];
      ++uses[b];
    }
    values.push_back(out);
    uses.push_back(0);
  }
  for (size_t i = 2; i < values.size(); ++i) {
    if (uses[i] == 0) m.Output(values[i], DataType::kFloat, {3, 5});
  }
  return m;
}

TEST(ParallelExecutorTest, RandomDagsInParallelEqualSequential) {
  for (uint32_t seed = 1; seed <= 25; ++seed) {
    ModelBuilder m = RandomDag(seed);
    SessionOptions sequential, parallel;
    sequential.optimization_level = parallel.optimization_level = OptimizationLevel::kDisabled;
    parallel.inter_op_threads = 4;
    auto a = InferenceSession::CreateFromBytes(m.Serialize(), sequential);
    auto b = InferenceSession::CreateFromBytes(m.Serialize(), parallel);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    Feeds feeds = {{"x0", Value(RandomFloatTensor({3, 5}, seed))}, {"x1", Value(RandomFloatTensor({3, 5}, seed + 99))}};
    auto want = (*a)->Run(RunOptions(), feeds, {});
    ASSERT_TRUE(want.ok()) << want.status();
    for (int run = 0; run < 20; ++run) {
      auto got = (*b)->Run(RunOptions(), feeds, {});
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->size(), want->size());
      for (size_t o = 0; o < want->size(); ++o) {
        for (int k = 0; k < 15; ++k) {
          ASSERT_EQ((*got)[o].tensor().data<float>()[k], (*want)[o].tensor().data<float>()[k])
              << "seed " << seed << " output " << o;
        }
      }
    }
  }
}

TEST(ParallelExecutorTest, ErrorOnOneLaneStopsTheRunAndSessionStaysUsable) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 4}).Input("s", DataType::kInt64, {-1});
  m.Output("a", DataType::kFloat, {-1, 4}).Output("b", DataType::kFloat, {-1});
  m.Node("Relu", {"x"}, {"r1"});
  m.Node("Relu", {"r1"}, {"a"});
  m.Node("Reshape", {"x", "s"}, {"b"}, "bad_reshape");
  SessionOptions options;
  options.inter_op_threads = 2;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  Tensor shape = Tensor::Allocate(DataType::kInt64, {1});
  shape.mutable_data<int64_t>()[0] = 7;  // 8 elements cannot become 7
  auto bad = (*session)->Run(RunOptions(), {{"x", Value(RandomFloatTensor({2, 4}, 1))}, {"s", Value(shape)}}, {});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad_reshape"), absl::string_view::npos) << bad.status();
  shape.mutable_data<int64_t>()[0] = 8;
  EXPECT_TRUE(
      (*session)->Run(RunOptions(), {{"x", Value(RandomFloatTensor({2, 4}, 1))}, {"s", Value(shape)}}, {}).ok());
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

TEST(ParallelExecutorTest, TerminateMidRunCancelsAndSessionStaysUsable) {
  // A chain of slow device nodes (10 ms each, 1 s in all); the flag is raised
  // once the first node has run, an event rather than a time, so a busy host
  // only has to let the canceller in within the remaining second.
  constexpr int kNodes = 100;
  testing::ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 2}).Output("y", DataType::kFloat, {2, 2});
  std::string last = "x";
  for (int i = 0; i < kNodes; ++i) {
    std::string out = i == kNodes - 1 ? "y" : "r" + std::to_string(i);
    m.Node("Relu", {last}, {out});
    last = out;
  }
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;
  options.providers = {"test:ops=Relu;delay_us=10000"};
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto relu_runs = [&] {
    int64_t ran = 0;
    for (const auto& k : (*session)->kernel_stats()) ran += k.op_type == "Relu" ? k.count : 0;
    return ran;
  };
  std::atomic<bool> stop{false}, finished{false};
  RunOptions run;
  run.terminate = &stop;
  run.run_tag = "request-7";
  std::thread canceller([&] {
    while (relu_runs() == 0 && !finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stop = true;
  });
  auto out = (*session)->Run(run, {{"x", Value(testing::RandomFloatTensor({2, 2}, 1))}}, {});
  finished = true;
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("request-7"), absl::string_view::npos);
  EXPECT_LT(relu_runs(), kNodes) << "the run stopped between nodes instead of finishing";
  stop = false;
  EXPECT_TRUE((*session)->Run(run, {{"x", Value(testing::RandomFloatTensor({2, 2}, 1))}}, {}).ok());
}

}  // namespace
}  // namespace onyx
