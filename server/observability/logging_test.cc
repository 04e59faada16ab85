#include "server/observability/logging.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/details/log_msg.h"
#include "spdlog/logger.h"
#include "spdlog/sinks/ostream_sink.h"

namespace onyx::server {
namespace {

std::string Json(absl::string_view text) {
  std::string out;
  AppendJsonString(text, &out);
  return out;
}

TEST(LoggingTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Json("plain"), R"("plain")");
  EXPECT_EQ(Json("say \"hi\" \\ bye"), R"("say \"hi\" \\ bye")");
  EXPECT_EQ(Json("a\nb\rc\td\be\ff"), R"("a\nb\rc\td\be\ff")");
  EXPECT_EQ(Json(std::string("nul\0x\x01\x1f\x7f", 8)), R"("nul\u0000x\u0001\u001f\u007f")");
}

TEST(LoggingTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // A lone continuation byte, a truncated sequence, an overlong '/' and a surrogate.
  EXPECT_EQ(Json("a\x80z"), R"("a\ufffdz")");
  EXPECT_EQ(Json("\xe2\x82"), R"("\ufffd\ufffd")");
  EXPECT_EQ(Json("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(Json("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
}

TEST(LoggingTest, FormatterWritesOneJsonObjectPerLine) {
  std::ostringstream stream;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream);
  sink->set_formatter(std::make_unique<JsonLineFormatter>());
  spdlog::logger logger("unit \"test\"", sink);
  // 2021-03-04T05:06:07.000089Z is 1614834367 s after the epoch.
  spdlog::details::log_msg msg(spdlog::source_loc{}, "unit \"test\"", spdlog::level::warn,
                               "line 1\n\"quoted\"\tand \\ \x02 end");
  msg.time = std::chrono::system_clock::time_point(std::chrono::microseconds(1614834367000089));
  sink->log(msg);
  EXPECT_EQ(stream.str(),
            R"({"ts":"2021-03-04T05:06:07.000089Z","level":"warning","logger":"unit \"test\"",)"
            R"("msg":"line 1\n\"quoted\"\tand \\ \u0002 end"})"
            "\n");
}

TEST(LoggingTest, TextFormatterKeepsEachRecordOnOneLine) {
  std::ostringstream stream;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream);
  sink->set_formatter(std::make_unique<OneLineTextFormatter>());
  spdlog::details::log_msg msg(spdlog::source_loc{}, "onyxd", spdlog::level::warn,
                               "checker: bad node\n==> Context: Name: add\r\x01 end");
  sink->log(msg);
  spdlog::details::log_msg plain(spdlog::source_loc{}, "onyxd", spdlog::level::info,
                                 "plain message");
  sink->log(plain);
  const std::string text = stream.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "[warning] checker: bad node\\n==> Context: Name: add\\r\\x01 end\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("[info] plain message\n"));
}

TEST(LoggingTest, RequestLineNamesEveryField) {
  RequestLogLine line;
  line.model = "mlp";
  line.version = "1";
  line.id = "req \"7\"\n";
  line.code = absl::StatusCode::kInvalidArgument;
  line.total_us = 412;
  line.batch_size = 3;
  EXPECT_EQ(FormatRequestLine(line),
            R"(model="mlp" version="1" id="req \"7\"\n" status=INVALID_ARGUMENT total_us=412 )"
            R"(batch_size=3)");
}

TEST(LoggingTest, SamplerRateZeroNeverAndOneAlways) {
  RequestLogSampler never(0);
  RequestLogSampler always(1);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(never.Sample());
    ASSERT_TRUE(always.Sample());
  }
}

TEST(LoggingTest, SamplerRateMatchesTheShareSampled) {
  // Binomial(20000, 0.25): mean 5000, standard deviation ~61; the bounds are
  // more than 8 deviations away.
  RequestLogSampler quarter(0.25);
  int sampled = 0;
  for (int i = 0; i < 20000; ++i) sampled += quarter.Sample();
  EXPECT_GT(sampled, 4500);
  EXPECT_LT(sampled, 5500);
}

TEST(LoggingTest, UnknownLevelIsRefused) {
  absl::Status status = ConfigureLogging({"loud", false});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("'loud'"));
}

}  // namespace
}  // namespace onyx::server
