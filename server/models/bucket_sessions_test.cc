#include "server/models/bucket_sessions.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onyx/memory.h"
#include "onyx/value_io.h"
#include "tests/util/model_builder.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Warmup = BucketSessions::Options::Warmup;

// y = table[ids], ids int64 [batch, 3], table float [16, 2]: an id outside
// [-16, 16) fails the run, so a run shows which ids it was fed.
std::string EmbeddingModel() {
  onyx::testing::ModelBuilder m(13);
  m.Input("ids", DataType::kInt64, {-1, 3}).Output("y", DataType::kFloat, {-1, 3, 2});
  m.Initializer("table", onyx::testing::RandomFloatTensor({16, 2}, 7));
  m.Node("Gather", {"table", "ids"}, {"y"});
  return m.Serialize();
}

// y = (relu(x W1) + x W2) W3 with x [batch, 16] and two [batch, 65536]
// intermediates (2 MiB each at batch 8) alive at once: the first run takes them
// from fresh arena regions one by one, and the planned block holding both at
// once needs a region of its own.
std::string WideModel() {
  onyx::testing::ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 16}).Output("y", DataType::kFloat, {-1, 4});
  m.Initializer("w1", onyx::testing::RandomFloatTensor({16, 65536}, 1));
  m.Initializer("w2", onyx::testing::RandomFloatTensor({16, 65536}, 2));
  m.Initializer("w3", onyx::testing::RandomFloatTensor({65536, 4}, 3));
  m.Node("MatMul", {"x", "w1"}, {"h1"});
  m.Node("Relu", {"h1"}, {"r"});
  m.Node("MatMul", {"x", "w2"}, {"h2"});
  m.Node("Add", {"r", "h2"}, {"s"});
  m.Node("MatMul", {"s", "w3"}, {"y"});
  return m.Serialize();
}

class BucketSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("bucket_sessions_test_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "samples");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Options for the model `bytes` (written to a file), with the given buckets.
  BucketSessions::Options OptionsFor(const std::string& bytes, std::vector<int64_t> buckets) {
    const std::string path = (dir_ / "model.onnx").string();
    std::ofstream(path, std::ios::binary) << bytes;
    onyx::SessionOptions probe_options;
    probe_options.optimization_level = onyx::OptimizationLevel::kDisabled;
    auto probe = onyx::InferenceSession::Create(path, probe_options);
    EXPECT_TRUE(probe.ok()) << probe.status();
    BucketSessions::Options options;
    options.model_name = "m";
    options.model_path = path;
    options.buckets = std::move(buckets);
    if (probe.ok()) options.inputs = (*probe)->inputs();
    options.warmup.sample_dir = (dir_ / "samples").string();
    return options;
  }

  void WriteSample(const std::string& file, const Tensor& tensor) {
    ASSERT_TRUE(onyx::WriteValueFile((dir_ / "samples" / file).string(), Value(tensor),
                                     ValueInfo::Kind::kTensor, "sample")
                    .ok());
  }

  fs::path dir_;
};

// Runs of every node of every session so far (each node counts every run).
std::vector<int64_t> RunCounts(const BucketSessions& sessions) {
  std::vector<int64_t> counts;
  for (size_t i = 0; i < sessions.size(); ++i) {
    std::vector<KernelStats> stats = sessions.session(i).kernel_stats();
    counts.push_back(stats.empty() ? -1 : stats.front().count);
  }
  return counts;
}

TEST_F(BucketSessionsTest, EverySessionRunsTheConfiguredWarmupCount) {
  BucketSessions::Options options = OptionsFor(EmbeddingModel(), {1, 2, 4});
  EXPECT_EQ(options.warmup.runs, 2);  // the default
  auto warm = BucketSessions::Create(options);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(RunCounts(**warm), (std::vector<int64_t>{2, 2, 2}));

  options.warmup.runs = 3;
  auto three = BucketSessions::Create(options);
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(RunCounts(**three), (std::vector<int64_t>{3, 3, 3}));

  options.warmup.runs = 0;
  auto cold = BucketSessions::Create(options);
  ASSERT_TRUE(cold.ok()) << cold.status();
  EXPECT_EQ(RunCounts(**cold), (std::vector<int64_t>{0, 0, 0}));
}

TEST_F(BucketSessionsTest, DefaultWarmupLeavesNothingForTheFirstRequestToGrow) {
  BucketSessions::Options options = OptionsFor(WideModel(), {8});
  auto sessions = BucketSessions::Create(options);
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  auto extends = [] {
    int64_t total = 0;
    for (const ArenaStats& arena : GetArenaStats()) total += arena.extends;
    return total;
  };
  // With one warm-up run this request would reserve the pattern block and
  // extend the arena; the default two leave it in place.
  const int64_t before = extends();
  onyx::Feeds feeds = {{"x", Value(onyx::testing::RandomFloatTensor({8, 16}, 4))}};
  auto outputs = (*sessions)->Run(0, feeds, {"y"});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(extends(), before);
  EXPECT_EQ(RunCounts(**sessions), (std::vector<int64_t>{3}));
}

TEST_F(BucketSessionsTest, RandomInputsAreValidSmallIds) {
  BucketSessions::Options options = OptionsFor(EmbeddingModel(), {1, 8});
  options.warmup.inputs = Warmup::Inputs::kRandom;
  auto sessions = BucketSessions::Create(options);
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  EXPECT_EQ(RunCounts(**sessions), (std::vector<int64_t>{2, 2}));
}

TEST_F(BucketSessionsTest, SamplesAreTiledToEachBucketAndActuallyFed) {
  BucketSessions::Options options = OptionsFor(EmbeddingModel(), {1, 4});
  options.warmup.inputs = Warmup::Inputs::kSamples;
  WriteSample("ids.pb", onyx::testing::Int64Tensor({3, 3}, {0, 1, 2, 3, 4, 5, 15, 14, 13}));
  auto sessions = BucketSessions::Create(options);
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  EXPECT_EQ(RunCounts(**sessions), (std::vector<int64_t>{2, 2}));

  // Row 2 (id 99) is cut from the batch-1 session but tiled into the batch-4 one.
  WriteSample("ids.pb", onyx::testing::Int64Tensor({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 99}));
  options.buckets = {1};
  EXPECT_TRUE(BucketSessions::Create(options).ok());
  options.buckets = {1, 4};
  absl::Status failed = BucketSessions::Create(options).status();
  EXPECT_THAT(failed.message(), AllOf(HasSubstr("bucket 4"), HasSubstr("warm-up run failed")));
}

TEST_F(BucketSessionsTest, BackendTestLayoutIsAccepted) {
  BucketSessions::Options options = OptionsFor(EmbeddingModel(), {2});
  options.warmup.inputs = Warmup::Inputs::kSamples;
  WriteSample("input_0.pb", onyx::testing::Int64Tensor({1, 3}, {99, 99, 99}));
  EXPECT_THAT(BucketSessions::Create(options).status().message(), HasSubstr("warm-up run failed"));
  WriteSample("input_0.pb", onyx::testing::Int64Tensor({1, 3}, {1, 2, 3}));
  EXPECT_TRUE(BucketSessions::Create(options).ok());
}

TEST_F(BucketSessionsTest, BadSamplesNameModelFileInputAndExpectedShape) {
  BucketSessions::Options options = OptionsFor(EmbeddingModel(), {2});
  options.warmup.inputs = Warmup::Inputs::kSamples;
  const std::string file = (dir_ / "samples" / "ids.pb").string();

  absl::Status missing = BucketSessions::Create(options).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(),
              AllOf(HasSubstr("model 'm': warm-up input 'ids'"), HasSubstr(file),
                    HasSubstr((dir_ / "samples" / "input_0.pb").string()), HasSubstr("found neither")));

  WriteSample("ids.pb", onyx::testing::FloatTensor({1, 3}, {0, 1, 2}));
  absl::Status type = BucketSessions::Create(options).status();
  EXPECT_EQ(type.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(type.message(), AllOf(HasSubstr("model 'm'"), HasSubstr(file), HasSubstr("input 'ids'"),
                                    HasSubstr("expected type int64, received float")));

  WriteSample("ids.pb", onyx::testing::Int64Tensor({1, 4}, {0, 1, 2, 3}));
  EXPECT_THAT(BucketSessions::Create(options).status().message(),
              AllOf(HasSubstr(file), HasSubstr("expected shape [d0, 3]"), HasSubstr("received [1,4]")));

  WriteSample("ids.pb", onyx::testing::Int64Tensor({3}, {0, 1, 2}));
  EXPECT_THAT(BucketSessions::Create(options).status().message(),
              AllOf(HasSubstr("expected shape [d0, 3]"), HasSubstr("received [3]")));

  std::ofstream(file) << "not a tensor";
  absl::Status garbage = BucketSessions::Create(options).status();
  EXPECT_EQ(garbage.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(garbage.message(), AllOf(HasSubstr("model 'm': warm-up sample"), HasSubstr(file)));
}

}  // namespace
}  // namespace onyx::server
