#include "server/models/rate_limiter.h"

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

TEST(RateLimiterTest, LetsOneEventThroughPerInterval) {
  RateLimiter limiter(absl::Seconds(10));
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_TRUE(limiter.Allow(t0));
  EXPECT_FALSE(limiter.Allow(t0));
  EXPECT_FALSE(limiter.Allow(t0 + absl::Seconds(9)));
  EXPECT_TRUE(limiter.Allow(t0 + absl::Seconds(10)));
  // The interval counts from the last event let through, not the last attempt.
  EXPECT_FALSE(limiter.Allow(t0 + absl::Seconds(19)));
  EXPECT_TRUE(limiter.Allow(t0 + absl::Seconds(20)));
}

}  // namespace
}  // namespace onyx::server
