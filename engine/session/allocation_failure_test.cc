// Allocation failures injected into a session's arena at every one of the
// first allocations of a run: the run fails cleanly (RESOURCE_EXHAUSTED, no
// crash), leaks nothing, and the next runs give the undisturbed outputs. The
// undisturbed run of the same session is the reference: what is tested is
// recovery, not arithmetic.
#include <cstring>
#include <string>
#include <vector>

#include "framework/device_arena.h"
#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

struct Case {
  std::string name;
  std::string model;
  Feeds feeds;
};

Case Mlp() {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {-1, 16}).Output("y", DataType::kFloat, {-1, 4});
  m.Initializer("w1", RandomFloatTensor({16, 32}, 1)).Initializer("b1", RandomFloatTensor({32}, 2));
  m.Initializer("w2", RandomFloatTensor({32, 4}, 3));
  m.Node("MatMul", {"x", "w1"}, {"h"});
  m.Node("Add", {"h", "b1"}, {"a"});
  m.Node("Relu", {"a"}, {"r"});
  m.Node("MatMul", {"r", "w2"}, {"z"});
  m.Node("Softmax", {"z"}, {"y"}).add_attribute()->CopyFrom(IntAttr("axis", -1));
  return {"mlp", m.Serialize(), {{"x", Value(RandomFloatTensor({3, 16}, 4))}}};
}

Case Cnn() {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 3, 16, 16}).Output("y", DataType::kFloat, {1, 4});
  m.Initializer("k1", RandomFloatTensor({8, 3, 3, 3}, 5)).Initializer("k2", RandomFloatTensor({4, 8, 3, 3}, 6));
  m.Initializer("kd", RandomFloatTensor({8, 1, 3, 3}, 7));
  auto& c1 = m.Node("Conv", {"x", "k1"}, {"c1"});
  c1.add_attribute()->CopyFrom(IntsAttr("pads", {1, 1, 1, 1}));
  m.Node("Relu", {"c1"}, {"r1"});
  auto& dw = m.Node("Conv", {"r1", "kd"}, {"d"});
  dw.add_attribute()->CopyFrom(IntAttr("group", 8));
  dw.add_attribute()->CopyFrom(IntsAttr("pads", {1, 1, 1, 1}));
  auto& pool = m.Node("MaxPool", {"d"}, {"p"});
  pool.add_attribute()->CopyFrom(IntsAttr("kernel_shape", {2, 2}));
  pool.add_attribute()->CopyFrom(IntsAttr("strides", {2, 2}));
  m.Node("Conv", {"p", "k2"}, {"c2"});
  m.Node("GlobalAveragePool", {"c2"}, {"g"});
  m.Node("Flatten", {"g"}, {"y"});
  return {"cnn", m.Serialize(), {{"x", Value(RandomFloatTensor({1, 3, 16, 16}, 8))}}};
}

// Output shapes that depend on values: NonZero, a reduction over its
// indices and a TopK of those, beside a LayerNormalization.
Case DataDependentShapes() {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {-1, 8}).Output("y", DataType::kFloat, {-1}).Output("n", DataType::kFloat, {-1, 8});
  m.Initializer("zero", testing::FloatTensor({}, {0.0f}));
  m.Initializer("axis0", Int64Tensor({1}, {0})).Initializer("k", Int64Tensor({1}, {3}));
  m.Initializer("g", RandomFloatTensor({8}, 9)).Initializer("b", RandomFloatTensor({8}, 10));
  m.Node("Greater", {"x", "zero"}, {"pos"});
  m.Node("NonZero", {"pos"}, {"idx"});  // [2, count]
  m.Node("Cast", {"idx"}, {"idxf"}).add_attribute()->CopyFrom(IntAttr("to", 1));
  m.Node("ReduceSum", {"idxf", "axis0"}, {"sums"}).add_attribute()->CopyFrom(IntAttr("keepdims", 0));
  m.Node("TopK", {"sums", "k"}, {"y", "where"});
  m.Node("LayerNormalization", {"x", "g", "b"}, {"n"}).add_attribute()->CopyFrom(FloatAttr("epsilon", 1e-5f));
  return {"data_dependent", m.Serialize(), {{"x", Value(RandomFloatTensor({5, 8}, 11))}}};
}

int64_t InUse(BFCArena& arena) { return arena.GetStats().in_use_bytes; }

void ExpectSameOutputs(const std::vector<Value>& got, const std::vector<Value>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const Tensor& g = got[i].tensor();
    const Tensor& w = want[i].tensor();
    ASSERT_EQ(g.dims(), w.dims()) << what << ", output " << i;
    ASSERT_EQ(g.byte_size(), w.byte_size()) << what << ", output " << i;
    EXPECT_EQ(std::memcmp(g.raw(), w.raw(), g.byte_size()), 0) << what << ", output " << i;
  }
}

class AllocationFailureTest : public ::testing::TestWithParam<Case (*)()> {};

TEST_P(AllocationFailureTest, EveryEarlyAllocationFailureFailsTheRunCleanlyAndTheNextRunRecovers) {
  const Case c = GetParam()();
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.arena_group = "allocation_failure_" + c.name;
    options.intra_op_threads = threads;
    auto session = InferenceSession::CreateFromBytes(c.model, options);
    ASSERT_TRUE(session.ok()) << session.status();
    auto arena = AcquireCpuArena(options.arena_group, 0);
    ASSERT_TRUE(arena.ok()) << arena.status();
    auto reference = (*session)->Run(RunOptions(), c.feeds, {});
    ASSERT_TRUE(reference.ok()) << reference.status();
    // The outputs hold arena memory: the baseline counts them.
    const int64_t baseline = InUse(**arena);

    int failed_runs = 0;
    bool reached_the_end = false;
    for (int64_t k = 0; k < 64 && !reached_the_end; ++k) {
      const std::string what =
          c.name + ", " + std::to_string(threads) + " thread(s), allocation " + std::to_string(k) + " fails";
      (*arena)->FailAllocationAfter(k);
      {
        auto run = (*session)->Run(RunOptions(), c.feeds, {});
        if (run.ok()) {
          // The run made fewer than k + 1 allocations: every earlier one was tried.
          ExpectSameOutputs(*run, *reference, what);
          reached_the_end = true;
        } else {
          ++failed_runs;
          EXPECT_EQ(run.status().code(), absl::StatusCode::kResourceExhausted) << what << ": " << run.status();
          EXPECT_NE(run.status().message().find("injected allocation failure"), std::string::npos)
              << what << ": " << run.status();
        }
      }
      (*arena)->FailAllocationAfter(-1);
      EXPECT_EQ(InUse(**arena), baseline) << what << ": arena bytes in use after the run";
      for (int again = 0; again < 2; ++again) {
        auto run = (*session)->Run(RunOptions(), c.feeds, {});
        ASSERT_TRUE(run.ok()) << what << ", then run " << again << ": " << run.status();
        ExpectSameOutputs(*run, *reference, what + ", then a clean run");
      }
      EXPECT_EQ(InUse(**arena), baseline) << what << ": arena bytes in use after the clean runs";
    }
    EXPECT_TRUE(reached_the_end) << c.name << ": a run still failed at the 64th allocation";
    EXPECT_GT(failed_runs, 0) << c.name << ": no run allocated from the arena";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, AllocationFailureTest, ::testing::Values(&Mlp, &Cnn, &DataDependentShapes),
                         [](const ::testing::TestParamInfo<Case (*)()>& info) { return info.param().name; });

}  // namespace
}  // namespace onyx
