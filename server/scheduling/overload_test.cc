#include "server/scheduling/overload.h"

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

TEST(OverloadTest, ReasonAndHintTravelWithTheStatus) {
  absl::Status status = Rejected(absl::ResourceExhaustedError("queue full"),
                                 RejectionReason::kQueueFull, absl::Microseconds(2500));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "queue full");
  ASSERT_TRUE(RejectionReasonOf(status).has_value());
  EXPECT_EQ(*RejectionReasonOf(status), RejectionReason::kQueueFull);
  ASSERT_TRUE(RetryAfterOf(status).has_value());
  EXPECT_EQ(*RetryAfterOf(status), absl::Milliseconds(3));  // rounded up
}

TEST(OverloadTest, NoHintUnlessGivenAndNoReasonOnOtherStatuses) {
  absl::Status deadline =
      Rejected(absl::DeadlineExceededError("late"), RejectionReason::kDeadlineBeforeRun);
  EXPECT_EQ(RejectionReasonOf(deadline), RejectionReason::kDeadlineBeforeRun);
  EXPECT_FALSE(RetryAfterOf(deadline).has_value());
  EXPECT_FALSE(RejectionReasonOf(absl::ResourceExhaustedError("arena")).has_value());
  EXPECT_FALSE(RetryAfterOf(absl::OkStatus()).has_value());
  // A tiny positive hint is still at least 1 ms.
  EXPECT_EQ(RetryAfterOf(Rejected(absl::ResourceExhaustedError("x"),
                                  RejectionReason::kServerInflightBytes, absl::Nanoseconds(1))),
            absl::Milliseconds(1));
}

TEST(OverloadTest, EveryReasonHasADistinctMetricLabel) {
  EXPECT_EQ(RejectionReasonName(RejectionReason::kQueueFull), "queue_full");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kModelInflightBytes), "model_inflight_bytes");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kServerInflightBytes), "server_inflight_bytes");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kDeadlineOnArrival), "deadline_on_arrival");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kDeadlineInQueue), "deadline_in_queue");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kDeadlineBeforeRun), "deadline_before_run");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kStreamBufferFull), "stream_buffer_full");
  for (size_t i = 0; i < kRejectionReasonCount; ++i) {
    const auto reason = static_cast<RejectionReason>(i);
    EXPECT_EQ(RejectionReasonOf(Rejected(absl::InternalError("x"), reason)), reason);
  }
}

}  // namespace
}  // namespace onyx::server
