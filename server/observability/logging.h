// onyxd's logging: stderr, as text or as one JSON object per line, plus sampled
// per-request lines.
//
//   RETURN_IF_ERROR(ConfigureLogging({.level = "info", .json = true}));
//   spdlog::info("ready");      // {"ts":"2026-01-02T03:04:05.123456Z","level":"info",
//                               //  "logger":"onyxd","msg":"ready"}
//   RequestLogSampler sampler(0.01);
//   if (sampler.Sample()) LogRequest(line);   // ~1% of requests
//
// The JSON fields: ts (RFC 3339, UTC, microseconds), level (spdlog's names:
// trace, debug, info, warning, error, critical), logger ("onyxd", "onyx.engine",
// "request"), msg. Strings are escaped per RFC 8259; bytes that are not valid
// UTF-8 become U+FFFD, so every line parses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "spdlog/formatter.h"

namespace onyx::server {

struct LoggingOptions {
  std::string level = "info";  // trace | debug | info | warn | error
  bool json = false;
};

// Makes a stderr logger "onyxd" the default and registers "request" on the
// same sink. Call once, before any other thread logs. INVALID_ARGUMENT for an
// unknown level.
absl::Status ConfigureLogging(const LoggingOptions& options);

// Appends `text` as a JSON string literal (with the quotes) to `out`.
void AppendJsonString(absl::string_view text, std::string* out);

// spdlog's default text pattern with every message on one line: newlines,
// carriage returns and other control characters in the message (a checker
// error spanning lines, a client's request id) are written as \n, \r and
// \xNN, so a reader of the log can trust that each line is one record.
class OneLineTextFormatter final : public spdlog::formatter {
 public:
  OneLineTextFormatter();
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;

 private:
  std::unique_ptr<spdlog::formatter> pattern_;
};

// spdlog formatter writing one JSON object per message (see the file comment).
// Thread-compatible, as spdlog requires of formatters (sinks serialize calls).
class JsonLineFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

// Decides which requests are logged: each call is true with probability `rate`
// (0: never, 1: always). Lock-free: a per-thread generator, no shared writes
// after the first call on a thread. Thread-safe.
class RequestLogSampler {
 public:
  explicit RequestLogSampler(double rate);
  bool Sample() const;
  double rate() const { return rate_; }

 private:
  double rate_;
  uint64_t threshold_;  // Sample() is true when a uniform 64-bit draw is below it
  bool always_;
};

// One finished inference call, as LogRequest writes it.
struct RequestLogLine {
  std::string model;
  std::string version;
  std::string id;
  absl::StatusCode code = absl::StatusCode::kOk;
  int64_t total_us = 0;
  int64_t batch_size = 0;
};

// Text of the line: model="mlp" version="1" id="r1" status=OK total_us=412
// batch_size=3 (model, version and id quoted and escaped as JSON strings).
std::string FormatRequestLine(const RequestLogLine& line);

// Writes FormatRequestLine(line) at level info to the "request" logger (a
// no-op before ConfigureLogging).
void LogRequest(const RequestLogLine& line);

}  // namespace onyx::server
