#include "loadtest/schedule.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace onyx::load {
namespace {

std::vector<double> All(const RateProfile& p, bool poisson, int streams, uint64_t seed = 1) {
  std::vector<double> out;
  for (int k = 0; k < streams; ++k) {
    ArrivalStream s(&p, poisson, seed, k, streams);
    for (double t = s.Next(); t < p.end_s(); t = s.Next()) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ScheduleTest, ConstantSpacingIsExactAndSplitsAcrossStreams) {
  RateProfile p;
  p.Add(10, 1000, 1000);
  const std::vector<double> one = All(p, false, 1), three = All(p, false, 3);
  ASSERT_EQ(one.size(), 10000u);
  EXPECT_EQ(one, three);  // three senders together send exactly the one schedule
  for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], i / 1000.0, 1e-9);
}

TEST(ScheduleTest, PoissonHasTheRateAndExponentialGapsAndRepeatsWithTheSeed) {
  RateProfile p;
  p.Add(100, 500, 500);
  const std::vector<double> a = All(p, true, 2, 7), b = All(p, true, 2, 7), c = All(p, true, 2, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // 50,000 expected; Poisson's standard deviation is ~224.
  EXPECT_NEAR(static_cast<double>(a.size()), 50000, 1500);
  // Exponential gaps: the share of gaps above the mean is e^-1.
  int above = 0;
  for (size_t i = 1; i < a.size(); ++i) above += (a[i] - a[i - 1]) > 1.0 / 500;
  EXPECT_NEAR(above / static_cast<double>(a.size()), std::exp(-1.0), 0.02);
}

TEST(ScheduleTest, LinearRampFollowsTheIntegralOfTheRate) {
  RateProfile p;
  p.Add(1, 100, 100);
  p.Add(10, 100, 1100);  // 100 + 6000 more
  EXPECT_NEAR(p.CountAt(11), 100 + 6000, 1e-6);
  EXPECT_NEAR(p.RateAt(6), 600, 1e-9);
  const std::vector<double> t = All(p, false, 1);
  EXPECT_EQ(t.size(), 6100u);
  // Arrivals in the ramp's last second: about the rate there (~1050).
  int last = 0;
  for (double x : t) last += x >= 10;
  EXPECT_NEAR(last, 1050, 2);
  for (double u : {0.0, 50.0, 100.0, 2000.0, 6099.0}) EXPECT_NEAR(p.CountAt(p.TimeAtCount(u)), u, 1e-6);
  EXPECT_TRUE(std::isinf(p.TimeAtCount(6100)));
}

}  // namespace
}  // namespace onyx::load
