#include "loadtest/sweep.h"

#include "gtest/gtest.h"
#include "loadtest/plan.h"

namespace onyx::load {
namespace {

TEST(SweepTest, RangesListsAndSingleValues) {
  EXPECT_EQ(*ParseLevels("--concurrency", "1:64:x2", 1, 1e5), (std::vector<double>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(*ParseLevels("--rate", "100:500:+100", 0, 1e9), (std::vector<double>{100, 200, 300, 400, 500}));
  EXPECT_EQ(*ParseLevels("--rate", "100:450:+100", 0, 1e9), (std::vector<double>{100, 200, 300, 400}));
  EXPECT_EQ(*ParseLevels("--rate", "50,70,90", 0, 1e9), (std::vector<double>{50, 70, 90}));
  EXPECT_EQ(*ParseLevels("--rate", "250", 0, 1e9), (std::vector<double>{250}));
}

TEST(SweepTest, ErrorsNameTheFlagAndTheText) {
  for (const char* bad : {"1:64", "1:64:x1", "64:1:x2", "1:64:*2", "1:64:+0", "a", "1:b:+1", "0"}) {
    absl::StatusOr<std::vector<double>> r = ParseLevels("--concurrency", bad, 1, 1e5);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--concurrency"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status();
  }
  EXPECT_FALSE(ParseLevels("--rate", "1:1000000:+1", 0, 1e9).ok());  // over 1000 levels
}

TEST(SweepTest, Ramps) {
  Ramp r = *ParseRamp("linear:100:2000");
  EXPECT_EQ(r.kind, Ramp::Kind::kLinear);
  EXPECT_EQ(r.from, 100);
  EXPECT_EQ(r.to, 2000);
  r = *ParseRamp("step:100:400:+100:5s");
  EXPECT_EQ(r.kind, Ramp::Kind::kStep);
  EXPECT_EQ(r.step, 100);
  EXPECT_EQ(r.hold_s, 5);
  r = *ParseRamp("step:400:100:-100:500ms");
  EXPECT_EQ(r.step, -100);
  EXPECT_DOUBLE_EQ(r.hold_s, 0.5);
  for (const char* bad : {"linear:1", "step:100:400:+100", "step:100:400:-100:5s", "cubic:1:2", "step:1:2:+1:0s"}) {
    EXPECT_FALSE(ParseRamp(bad).ok()) << bad;
  }
}

TEST(SweepTest, StepRampIsOnePhaseWithConsecutiveLevels) {
  Options o;
  o.warmup_s = 2;
  o.ramp = *ParseRamp("step:100:300:+100:5s");
  std::vector<Phase> phases = *PlanPhases(o);
  ASSERT_EQ(phases.size(), 1u);
  ASSERT_EQ(phases[0].levels.size(), 3u);
  EXPECT_EQ(phases[0].levels[0].start_s, 2);
  EXPECT_EQ(phases[0].levels[1].start_s, 7);
  EXPECT_EQ(phases[0].levels[2].end_s, 17);
  EXPECT_EQ(phases[0].levels[2].rate_from, 300);
  // Expected arrivals: 2 s warm-up at 100/s, then 500 + 1000 + 1500.
  EXPECT_NEAR(phases[0].profile.CountAt(17), 200 + 500 + 1000 + 1500, 1e-6);
}

TEST(SweepTest, SweepIsOnePhasePerLevel) {
  Options o;
  o.rate = {100, 200};
  o.duration_s = 3;
  o.warmup_s = 1;
  std::vector<Phase> phases = *PlanPhases(o);
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[1].levels[0].rate_from, 200);
  EXPECT_EQ(phases[1].end_s(), 4);
  o.rate.clear();
  o.concurrency = {1, 2, 4};
  phases = *PlanPhases(o);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_FALSE(phases[2].open_loop);
  EXPECT_EQ(phases[2].concurrency, 4);
}

}  // namespace
}  // namespace onyx::load
