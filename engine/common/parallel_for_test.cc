// Thread-count scoping of ParallelFor and oneDNN.
#include "common/parallel_for.h"

#include <atomic>

#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

TEST(ParallelForTest, ScopedThreadsNestAndRestore) {
  const int process_default = IntraOpThreads();
  {
    ScopedIntraOpThreads one(1);
    EXPECT_EQ(IntraOpThreads(), 1);
    {
      ScopedIntraOpThreads keep(0);  // <= 0 keeps the enclosing value
      EXPECT_EQ(IntraOpThreads(), 1);
      ScopedIntraOpThreads three(3);
      EXPECT_EQ(IntraOpThreads(), 3);
    }
    EXPECT_EQ(IntraOpThreads(), 1);
  }
  EXPECT_EQ(IntraOpThreads(), process_default);
}

TEST(ParallelForTest, OneThreadRunsTheWholeRangeInline) {
  ScopedIntraOpThreads one(1);
  std::atomic<int> calls{0};
  int64_t covered = 0;
  ParallelFor(1000, 1, [&](int64_t begin, int64_t end) {
    ++calls;
    covered += end - begin;
  });
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(covered, 1000);
}

TEST(ParallelForTest, SplitsIntoOneBlockPerThreadCoveringTheRangeOnce) {
  ScopedIntraOpThreads two(2);
  std::atomic<int> calls{0};
  std::atomic<int64_t> covered{0};
  ParallelFor(1001, 10, [&](int64_t begin, int64_t end) {
    ++calls;
    covered += end - begin;
  });
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(covered.load(), 1001);
}

TEST(ParallelForTest, SessionThreadCountDoesNotLeakIntoTheProcess) {
  const int process_default = IntraOpThreads();
  testing::ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 4}).Output("y", DataType::kFloat, {-1, 4});
  m.Node("Relu", {"x"}, {"y"}, "act");
  SessionOptions options;
  options.intra_op_threads = process_default + 3;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  Feeds feeds = {{"x", Value(Tensor::Allocate(DataType::kFloat, {2, 4}))}};
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
  // The count applies while the session's nodes run, not afterwards.
  EXPECT_EQ(IntraOpThreads(), process_default);
}

}  // namespace
}  // namespace onyx
