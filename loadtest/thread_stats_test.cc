#include "loadtest/thread_stats.h"

#include <thread>

#include "gtest/gtest.h"
#include "loadtest/collector.h"
#include "loadtest/gate.h"
#include "loadtest/level_result.h"

namespace onyx::load {
namespace {

TEST(ThreadStatsTest, ResponseFromIntendedServiceFromSentKeptApart) {
  ThreadStats stats(2);
  Collector c(2);
  c.Register(&stats);
  // Intended at 0, sent 900 ms late (queued in the client), answered 1 ms after sending.
  stats.RecordDispatch(0, 1, 0, false);
  stats.RecordCompletion({0, 1, 0, 900'000'000, 901'000'000, 0, "", "peer-a"});
  stats.RecordDispatch(0, 0, 2'000'000, false);  // 2 ms late: counts as a late send
  stats.RecordCompletion({0, 0, 0, 0, 5'000, 14, "down", "peer-a"});
  stats.RecordDispatch(0, 0, 0, true);                            // dropped
  stats.RecordCompletion({-1, 0, 0, 0, 1'000, 0, "", "peer-a"});  // warm-up: window only
  c.Drain();
  EXPECT_EQ(c.window().ok, 2);
  EXPECT_EQ(c.window().failed, 1);
  EXPECT_EQ(c.window().dispatched, 3);
  EXPECT_EQ(c.window().dropped, 1);
  std::unique_ptr<LevelTotals> t = c.TakeLevel(0);
  EXPECT_EQ(t->models[1].response->max(), 901'000'000);
  EXPECT_EQ(t->models[1].service->max(), 1'000'000);
  EXPECT_EQ(t->models[0].failed, 1);
  EXPECT_EQ(t->models[0].dropped, 1);
  EXPECT_EQ(t->models[0].intended, 2);
  EXPECT_EQ(t->late, 1);
  EXPECT_EQ(t->peers["peer-a"], 2);
  EXPECT_EQ((t->models[0].errors[{14, "down"}]), 1);
  // Drained: a second drain adds nothing.
  c.Drain();
  EXPECT_EQ(c.window().ok, 0);
  EXPECT_EQ(c.TakeLevel(0)->models[1].ok, 0);
}

TEST(ThreadStatsTest, SummaryGroupsErrorsAndComputesShares) {
  ThreadStats stats(1);
  for (int i = 0; i < 90; ++i) {
    stats.RecordDispatch(0, 0, 0, false);
    stats.RecordCompletion({0, 0, 0, 0, 1'000'000, 0, "", ""});
  }
  for (int i = 0; i < 10; ++i) {
    stats.RecordDispatch(0, 0, 0, false);
    stats.RecordCompletion({0, 0, 0, 0, 1'000, i < 7 ? 14 : 8, i < 7 ? "down" : "full", ""});
  }
  Collector c(1);
  c.Register(&stats);
  c.Drain();
  LevelInputs in;
  in.measured_s = 2;
  in.model_names = {"m"};
  LevelResult r = SummarizeLevel(in, c.TakeLevel(0));
  EXPECT_EQ(r.all.ok, 90);
  EXPECT_NEAR(r.all.error_share(), 0.10, 1e-12);
  EXPECT_NEAR(r.all.throughput, 45, 1e-12);
  ASSERT_EQ(r.all.errors.size(), 2u);
  EXPECT_EQ(r.all.errors[0].code, "UNAVAILABLE");
  EXPECT_EQ(r.all.errors[0].count, 7);
  EXPECT_EQ(r.all.errors[1].code, "RESOURCE_EXHAUSTED");
}

TEST(LevelResultTest, RisingLatencyIsUnstableAPauseIsNot) {
  std::vector<WindowPoint> w(9);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i].ok = 100;
    w[i].p50 = 1'000'000 + static_cast<int64_t>(i) * 2'000'000;  // 1 ms rising by 2 ms a second
  }
  std::string why;
  EXPECT_TRUE(RisingLatency(w, &why));
  EXPECT_NE(why.find("fell behind"), std::string::npos);
  for (auto& p : w) p.p50 = 1'000'000;
  w[4].p50 = 900'000'000;  // a one-second stall in the middle
  EXPECT_FALSE(RisingLatency(w, &why));
  for (size_t i = 0; i < w.size(); ++i) w[i].p50 = 100'000 + static_cast<int64_t>(i) * 60'000;  // x5 but < 1 ms
  EXPECT_FALSE(RisingLatency(w, &why));
}

TEST(GateTest, QueuesOverTheCeilingAndPassesSlotsOn) {
  Gate g(2, false);
  Pending p;
  EXPECT_EQ(g.Admit(p), Gate::kSend);
  EXPECT_EQ(g.Admit(p), Gate::kSend);
  p.intended_ns = 42;
  EXPECT_EQ(g.Admit(p), Gate::kQueued);
  EXPECT_EQ(g.queued(), 1);
  Pending next;
  EXPECT_TRUE(g.Release(&next));
  EXPECT_EQ(next.intended_ns, 42);  // keeps its intended time
  EXPECT_FALSE(g.Release(&next));
  EXPECT_FALSE(g.Release(&next));
  EXPECT_EQ(g.Admit(p), Gate::kSend);
  Gate drop(1, true);
  EXPECT_EQ(drop.Admit(p), Gate::kSend);
  EXPECT_EQ(drop.Admit(p), Gate::kDropped);
}

}  // namespace
}  // namespace onyx::load
