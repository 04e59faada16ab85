#include "loadtest/criteria.h"

#include "gtest/gtest.h"
#include "loadtest/options.h"
#include "loadtest/verdict.h"

namespace onyx::load {
namespace {

// A level whose 1000 replies took 1..1000 us; 10 more failed; 1% of sends late.
LevelResult Level() {
  LevelResult l;
  l.label = "rate 100/s";
  Histogram h, s;
  for (int i = 1; i <= 1000; ++i) {
    h.Record(i * 1000);
    s.Record(i * 500);
  }
  l.all.response = HistogramData::From(h);
  l.all.service = HistogramData::From(s);
  l.all.ok = 1000;
  l.all.failed = 10;
  l.all.intended = 1010;
  l.all.sent = 1010;
  l.all.throughput = 100;
  l.late_sends = 10;
  return l;
}

bool Met(const char* text) {
  LevelResult l = Level();
  return Criterion::Parse("--assert", text)->Check(l.all, l).met;
}

TEST(CriteriaTest, EvaluatesEveryMetric) {
  EXPECT_TRUE(Met("p99<1ms"));  // p99 = 990 us
  EXPECT_FALSE(Met("p99<980us"));
  EXPECT_TRUE(Met("p50<=501us"));  // 500 us, within the histogram's 0.05%
  EXPECT_FALSE(Met("p50<499us"));
  EXPECT_TRUE(Met("max<=1ms"));
  EXPECT_FALSE(Met("max<1ms"));
  EXPECT_TRUE(Met("mean<501us"));
  EXPECT_TRUE(Met("service.p99<500us"));
  EXPECT_FALSE(Met("service.p99<490us"));
  EXPECT_TRUE(Met("err<1%"));  // 10 / 1010 = 0.99%
  EXPECT_FALSE(Met("err<0.9%"));
  EXPECT_TRUE(Met("err<0.01"));
  EXPECT_TRUE(Met("throughput>=100"));
  EXPECT_FALSE(Met("throughput>100"));
  EXPECT_TRUE(Met("late<=1%"));
  EXPECT_NEAR(Criterion::Parse("--assert", "p99.9<1s")->Check(Level().all, Level()).measured, 999'000, 999);
}

TEST(CriteriaTest, MalformedCriteriaNameFlagAndText) {
  for (const char* bad : {"p99", "p99<25", "p100<1ms", "q99<1ms", "err<150%", "p99<fast", "<1ms"}) {
    absl::StatusOr<Criterion> c = Criterion::Parse("--slo", bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find("--slo"), std::string::npos);
    EXPECT_NE(c.status().message().find(bad), std::string::npos) << c.status();
  }
  EXPECT_EQ(ParseCriteria("--slo", "p99<20ms, err<0.1%")->size(), 2u);
}

TEST(CriteriaTest, NoSuccessfulReplyFailsALatencyBound) {
  LevelResult l;
  l.all.failed = 5;
  EXPECT_FALSE(Criterion::Parse("--assert", "p99<1s")->Check(l.all, l).met);
}

TEST(VerdictTest, HighestCodeWins) {
  RunResult r;
  r.levels.push_back(Level());
  std::vector<Criterion> asserts = {*Criterion::Parse("--assert", "p99<1us")};
  DecideVerdict({}, &r);
  EXPECT_EQ(r.exit_code, kExitOk);
  DecideVerdict(asserts, &r);
  EXPECT_EQ(r.exit_code, kExitAssert);
  EXPECT_FALSE(r.asserts[0].met);
  r.levels[0].unstable = true;
  DecideVerdict(asserts, &r);
  EXPECT_EQ(r.exit_code, kExitUnstable);
  r.levels[0].saturated = true;
  DecideVerdict(asserts, &r);
  EXPECT_EQ(r.exit_code, kExitSaturated);
  // Every request failed UNAVAILABLE: unreachable, whatever else holds.
  r.levels[0].all.ok = 0;
  r.levels[0].all.failed = 3;
  r.levels[0].all.errors = {{"UNAVAILABLE", 3, {}}};
  DecideVerdict(asserts, &r);
  EXPECT_EQ(r.exit_code, kExitUnreachable);
  EXPECT_EQ(r.verdict, "target unreachable");
}

TEST(VerdictTest, FindMaxCountsOnlyProbesThatMetTheSlo) {
  RunResult r;
  r.find_max.ran = true;
  r.find_max.found = true;
  r.levels.push_back(Level());
  r.levels.push_back(Level());
  r.levels[1].slo_met = false;
  r.levels[1].unstable = true;  // an overloaded probe above the maximum
  DecideVerdict({}, &r);
  EXPECT_EQ(r.exit_code, kExitOk);
  r.find_max.found = false;
  DecideVerdict({}, &r);
  EXPECT_EQ(r.exit_code, kExitAssert);
}

TEST(FlagsTest, ErrorsNameTheFlagExpectedAndReceived) {
  const auto error = [](std::vector<std::string> args) {
    absl::StatusOr<Options> o = ParseFlags(args);
    return o.ok() ? std::string("ok") : std::string(o.status().message());
  };
  EXPECT_EQ(error({"--model", "m", "--threads", "0"}), "--threads: expected an integer in [1, 64], got '0'");
  EXPECT_NE(error({"--model", "m", "--duration", "ten"}).find("got 'ten'"), std::string::npos);
  EXPECT_NE(error({"--model", "m", "--rate", "10", "--concurrency", "2"}).find("cannot be combined"),
            std::string::npos);
  EXPECT_NE(error({"--model", "m", "--find-max"}).find("--slo"), std::string::npos);
  EXPECT_NE(error({"--model", "m", "--bogus"}).find("unknown flag '--bogus'"), std::string::npos);
  EXPECT_NE(error({}).find("--model"), std::string::npos);
  EXPECT_NE(error({"--model", "m", "--concurrency", "4", "--max-inflight", "2"}).find("--max-inflight"),
            std::string::npos);
  EXPECT_NE(error({"--model", "m", "--shape", "x=2,a"}).find("--shape"), std::string::npos);
  EXPECT_EQ(error({"--model", "m", "--rate=100", "--max-inflight", "1", "--overflow", "drop"}), "ok");
  Options o = *ParseFlags({"--model", "a:2@3", "--model", "b", "--input-data", "a=zeros", "--input-data", "x=y"});
  EXPECT_EQ(o.models[0].name, "a");
  EXPECT_EQ(o.models[0].version, "2");
  EXPECT_EQ(o.models[0].weight, 3);
  EXPECT_EQ(o.data[0].model, "a");
  EXPECT_EQ(o.data[1].model, "");  // "x" is no --model: the '=' is part of the path
  EXPECT_EQ(o.data[1].source, "x=y");
  EXPECT_EQ(o.concurrency, std::vector<double>{1});  // no load flag: closed loop of 1
}

}  // namespace
}  // namespace onyx::load
