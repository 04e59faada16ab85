#include "server/scheduling/byte_budget.h"

#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ByteBudgetTest, AdmitsWithinTheLimitAndReleasesOnce) {
  ByteBudget budget("server max_inflight_bytes", 100);
  absl::StatusOr<ByteBudget::Lease> a = budget.Acquire(60);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<ByteBudget::Lease> b = budget.Acquire(40);  // exactly full
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(budget.in_flight(), 100);

  absl::StatusOr<ByteBudget::Lease> c = budget.Acquire(1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(c.status().message(), AllOf(HasSubstr("server max_inflight_bytes 100"),
                                          HasSubstr("100 request bytes"), HasSubstr("has 1")));

  a->Release();
  a->Release();  // idempotent
  EXPECT_EQ(budget.in_flight(), 40);
  {
    ByteBudget::Lease moved = *std::move(b);
    EXPECT_EQ(budget.in_flight(), 40);  // the move transfers, not releases
  }
  EXPECT_EQ(budget.in_flight(), 0);  // released when the holder went away
}

TEST(ByteBudgetTest, ARequestLargerThanTheWholeBudgetIsAlwaysRefused) {
  ByteBudget budget("b", 10);
  absl::StatusOr<ByteBudget::Lease> big = budget.Acquire(11);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("can never be admitted"));
  EXPECT_EQ(budget.in_flight(), 0);
}

TEST(ByteBudgetTest, ZeroLimitCountsButNeverRefuses) {
  ByteBudget budget("b", 0);
  absl::StatusOr<ByteBudget::Lease> a = budget.Acquire(int64_t{1} << 40);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(budget.in_flight(), int64_t{1} << 40);
}

}  // namespace
}  // namespace onyx::server
