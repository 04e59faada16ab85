#include "common/cpu_quota.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(CpuQuotaTest, CpuMaxGivesQuotaOverPeriod) {
  auto two = ParseCgroupCpuMax("200000 100000\n");
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_DOUBLE_EQ(*two, 2.0);
  auto half = ParseCgroupCpuMax("50000 100000");
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_DOUBLE_EQ(*half, 0.5);
}

TEST(CpuQuotaTest, CpuMaxUnlimitedIsZero) {
  auto unlimited = ParseCgroupCpuMax("max 100000\n");
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  EXPECT_EQ(*unlimited, 0.0);
}

TEST(CpuQuotaTest, MalformedCpuMaxIsAnErrorQuotingTheText) {
  for (const char* text : {"200000abc 100000", "200000 100000x", "200000", "-5 100000", "200000 0", "",
                           "200000 100000 7", "99999999999999999999 100000"}) {
    auto quota = ParseCgroupCpuMax(text);
    ASSERT_FALSE(quota.ok()) << "'" << text << "' parsed as " << *quota;
    EXPECT_TRUE(absl::IsInvalidArgument(quota.status())) << quota.status();
    EXPECT_THAT(quota.status().message(),
                AllOf(HasSubstr("/sys/fs/cgroup/cpu.max"), HasSubstr(std::string("received '") + text + "'")));
  }
}

TEST(CpuQuotaTest, V1QuotaOverPeriodAndMinusOneIsUnlimited) {
  auto quota = ParseCgroupV1Quota("150000\n", "100000\n");
  ASSERT_TRUE(quota.ok()) << quota.status();
  EXPECT_DOUBLE_EQ(*quota, 1.5);
  auto unlimited = ParseCgroupV1Quota("-1\n", "100000\n");
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  EXPECT_EQ(*unlimited, 0.0);
}

TEST(CpuQuotaTest, MalformedV1FilesAreErrorsNamingTheFile) {
  auto quota = ParseCgroupV1Quota("15e4\n", "100000\n");
  ASSERT_FALSE(quota.ok());
  EXPECT_THAT(quota.status().message(), AllOf(HasSubstr("cpu.cfs_quota_us"), HasSubstr("received '15e4'")));
  auto period = ParseCgroupV1Quota("150000\n", "0\n");
  ASSERT_FALSE(period.ok());
  EXPECT_THAT(period.status().message(), AllOf(HasSubstr("cpu.cfs_period_us"), HasSubstr("received '0'")));
}

}  // namespace
}  // namespace onyx
