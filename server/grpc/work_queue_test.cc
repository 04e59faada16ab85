#include "server/grpc/work_queue.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

TEST(WorkQueueTest, RunsEveryClosureInOrderOnOneThread) {
  std::vector<int> order;
  {
    WorkQueue queue("test", 1, 100);
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(queue.Submit([&order, i] { order.push_back(i); }).ok());
    }
  }  // the destructor runs what was accepted
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST(WorkQueueTest, RefusesWorkBeyondTheBacklogAndNamesTheQueue) {
  absl::Notification release;
  absl::Notification started;
  WorkQueue queue("repository", 1, 2);
  ASSERT_TRUE(queue.Submit([&] {
    started.Notify();
    release.WaitForNotification();
  }).ok());
  started.WaitForNotification();  // the thread is busy; the backlog is empty
  EXPECT_TRUE(queue.Submit([] {}).ok());
  EXPECT_TRUE(queue.Submit([] {}).ok());
  absl::Status full = queue.Submit([] {});
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("repository work queue is full"), absl::string_view::npos) << full;
  EXPECT_NE(full.message().find("limit 2"), absl::string_view::npos) << full;
  release.Notify();
}

TEST(WorkQueueTest, SeveralThreadsRunClosuresConcurrently) {
  std::atomic<int> running{0};
  absl::Notification both;
  WorkQueue queue("test", 2, 10);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(queue.Submit([&] {
      if (++running == 2) both.Notify();
      both.WaitForNotification();  // only returns if the other one runs too
    }).ok());
  }
  both.WaitForNotification();
}

}  // namespace
}  // namespace onyx::server
