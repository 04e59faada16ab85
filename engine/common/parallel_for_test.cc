// Thread-count scoping of ParallelFor and oneDNN.
#include "common/parallel_for.h"

#include <atomic>
#include <string>
#include <vector>

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
  ParallelFor(1001, 10, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls.load(), 2);
}

// Every index in [0, n) is handed to exactly one call, whatever n, grain and
// thread count: no gap, no overlap, no block outside the range.
TEST(ParallelForTest, EveryIndexIsCoveredExactlyOnce) {
  for (int threads : {1, 2, 3, 4, 7}) {
    ScopedIntraOpThreads scoped(threads);
    for (int64_t n : {1, 2, 7, 10, 1001, 4096}) {
      for (int64_t grain : {1, 3, 10, 5000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int> calls{0}, bad_blocks{0};
        ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
          ++calls;
          if (begin < 0 || end > n || begin >= end) {
            ++bad_blocks;
            return;
          }
          for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
        });
        const std::string where =
            "threads " + std::to_string(threads) + ", n " + std::to_string(n) + ", grain " + std::to_string(grain);
        EXPECT_EQ(bad_blocks.load(), 0) << where;
        EXPECT_LE(calls.load(), threads) << where;
        int64_t wrong = 0, first_wrong = -1;
        for (int64_t i = 0; i < n; ++i) {
          if (hits[static_cast<size_t>(i)].load() != 1 && wrong++ == 0) first_wrong = i;
        }
        EXPECT_EQ(wrong, 0) << where << ": index " << first_wrong << " covered "
                            << (first_wrong < 0 ? 0 : hits[static_cast<size_t>(first_wrong)].load()) << " times";
      }
    }
  }
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
