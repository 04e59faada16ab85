#include "tests/conformance/isolation.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onyx::conformance {
namespace {

std::vector<absl::Status> RunAll(const std::vector<std::function<absl::Status()>>& tasks, IsolationOptions options,
                                 std::vector<size_t>* order = nullptr) {
  std::vector<absl::Status> results(tasks.size());
  RunIsolated(
      tasks.size(), [&](size_t i) { return tasks[i](); }, options,
      [&](size_t i, const absl::Status& s) {
    results[i] = s;
    if (order != nullptr) order->push_back(i);
      });
  return results;
}

TEST(IsolationTest, PassesStatusBackFromTheChild) {
  auto results =
      RunAll({[] { return absl::OkStatus(); }, [] { return absl::UnimplementedError("no kernel\nsecond line"); }}, {});
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1], absl::UnimplementedError("no kernel\nsecond line"));
}

TEST(IsolationTest, CrashAbortAndExceptionBecomeFailures) {
  auto results = RunAll(
      {[]() -> absl::Status {
         volatile int* p = nullptr;
         *p = 1;
         return absl::OkStatus();
       },
       []() -> absl::Status {
         std::fprintf(stderr, "about to abort\n");
         std::abort();
       },
       []() -> absl::Status { throw std::runtime_error("locale not found"); }, []() -> absl::Status { _exit(3); }},
      {});
  EXPECT_EQ(results[0].message(), "crashed (signal 11)");
  EXPECT_EQ(results[1].message(), "crashed (signal 6): about to abort");
  EXPECT_EQ(results[2], absl::InternalError("threw locale not found"));
  EXPECT_EQ(results[3].message(), "exited with status 3");
}

TEST(IsolationTest, HangIsKilledAtTheTimeout) {
  IsolationOptions options;
  options.timeout_seconds = 0.3;
  auto results = RunAll({[]() -> absl::Status {
                          pause();  // waits for a signal that never comes
                          return absl::OkStatus();
                        }},
                        options);
  EXPECT_EQ(results[0], absl::DeadlineExceededError("timed out after 0.3 s"));
}

TEST(IsolationTest, ParallelJobsReportInOrder) {
  IsolationOptions options;
  options.jobs = 3;
  std::vector<std::function<absl::Status()>> tasks;
  for (int i = 0; i < 7; ++i) {
    tasks.push_back([i] {
      usleep((7 - i) * 2000);  // later tasks finish first
      return i % 2 == 0 ? absl::OkStatus() : absl::InternalError(std::to_string(i));
    });
  }
  std::vector<size_t> order;
  auto results = RunAll(tasks, options, &order);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6}));
  for (int i = 0; i < 7; ++i) EXPECT_EQ(results[i].ok(), i % 2 == 0) << i;
  EXPECT_EQ(results[5].message(), "5");
}

TEST(IsolationTest, MemoryLimitTurnsHugeAllocationIntoException) {
  if (!kAddressSpaceLimitApplies) GTEST_SKIP() << "no address-space limit under a sanitizer";
  IsolationOptions options;
  options.memory_limit_mb = 512;
  auto results = RunAll({[]() -> absl::Status {
                          std::vector<char> big(size_t{2} << 30);
                          return absl::OkStatus();
                        }},
                        options);
  EXPECT_EQ(results[0], absl::InternalError("threw std::bad_alloc"));
}

}  // namespace
}  // namespace onyx::conformance
