#include "server/observability/logging.h"

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace onyx::server {
namespace {

constexpr char kRequestLogger[] = "request";

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not
// one (overlong forms, surrogates and code points past U+10FFFF included).
size_t Utf8SequenceLength(absl::string_view s) {
  const auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  size_t length = 0;
  uint32_t min = 0;
  uint32_t cp = 0;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2, min = 0x80, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3, min = 0x800, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return length;
}

void AppendTimestamp(std::chrono::system_clock::time_point time, std::string* out) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  // Floor division so that times before 1970 still format (tests use them).
  int64_t seconds = micros / 1000000;
  int64_t fraction = micros % 1000000;
  if (fraction < 0) fraction += 1000000, seconds -= 1;
  const time_t t = static_cast<time_t>(seconds);
  struct tm utc;
  gmtime_r(&t, &utc);
  char buffer[40];
  const int n = std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
                              utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                              utc.tm_min, utc.tm_sec, static_cast<int>(fraction));
  out->append(buffer, static_cast<size_t>(n));
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

void AppendJsonString(absl::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else if (c >= 0x80) {
          const size_t length = Utf8SequenceLength(text.substr(i));
          if (length == 0) {
            out->append("\\ufffd");  // one replacement per invalid byte
            ++i;
          } else {
            out->append(text.data() + i, length);
            i += length;
          }
          continue;
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void JsonLineFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  std::string line;
  line.reserve(96 + msg.payload.size());
  line.append("{\"ts\":\"");
  AppendTimestamp(msg.time, &line);
  line.append("\",\"level\":");
  const auto level = spdlog::level::to_string_view(msg.level);
  AppendJsonString(absl::string_view(level.data(), level.size()), &line);
  line.append(",\"logger\":");
  AppendJsonString(absl::string_view(msg.logger_name.data(), msg.logger_name.size()), &line);
  line.append(",\"msg\":");
  AppendJsonString(absl::string_view(msg.payload.data(), msg.payload.size()), &line);
  line.append("}\n");
  dest.append(line.data(), line.data() + line.size());
}

OneLineTextFormatter::OneLineTextFormatter()
    : pattern_(std::make_unique<spdlog::pattern_formatter>()) {}

void OneLineTextFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const absl::string_view payload(msg.payload.data(), msg.payload.size());
  bool clean = true;
  for (unsigned char c : payload) clean = clean && c >= 0x20 && c != 0x7f;
  if (clean) return pattern_->format(msg, dest);
  std::string escaped;
  escaped.reserve(payload.size() + 16);
  for (unsigned char c : payload) {
    if (c == '\n') {
      escaped.append("\\n");
    } else if (c == '\r') {
      escaped.append("\\r");
    } else if (c < 0x20 || c == 0x7f) {
      absl::StrAppend(&escaped, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      escaped.push_back(static_cast<char>(c));
    }
  }
  spdlog::details::log_msg copy = msg;
  copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
  pattern_->format(copy, dest);
}

std::unique_ptr<spdlog::formatter> OneLineTextFormatter::clone() const {
  return std::make_unique<OneLineTextFormatter>();
}

std::unique_ptr<spdlog::formatter> JsonLineFormatter::clone() const {
  return std::make_unique<JsonLineFormatter>();
}

absl::Status ConfigureLogging(const LoggingOptions& options) {
  const spdlog::level::level_enum level = spdlog::level::from_str(options.level);
  // from_str maps unknown names to "off"; only "off" itself may mean off.
  if (level == spdlog::level::off && options.level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("log level: expected one of trace, debug, info, warn, error, received '",
                     options.level, "'"));
  }
  spdlog::sink_ptr sink;
  if (options.json) {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_formatter(std::make_unique<JsonLineFormatter>());
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    sink->set_formatter(std::make_unique<OneLineTextFormatter>());
  }
  spdlog::drop("onyxd");
  spdlog::drop(kRequestLogger);
  auto logger = std::make_shared<spdlog::logger>("onyxd", sink);
  auto requests = std::make_shared<spdlog::logger>(kRequestLogger, sink);
  for (const auto& l : {logger, requests}) {
    l->set_level(level);
    l->flush_on(spdlog::level::info);
  }
  spdlog::register_logger(requests);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

RequestLogSampler::RequestLogSampler(double rate)
    : rate_(rate),
      // 2^64 * rate; rate >= 1 is "always", which the threshold cannot express.
      threshold_(rate <= 0 || rate >= 1 ? 0 : static_cast<uint64_t>(rate * 18446744073709551616.0)),
      always_(rate >= 1) {}

bool RequestLogSampler::Sample() const {
  if (always_) return true;
  if (threshold_ == 0) return false;
  // Each thread seeds its own generator once from a shared counter; draws
  // touch only thread-local state.
  static std::atomic<uint64_t> next_seed{0x6A09E667F3BCC908ull};
  thread_local uint64_t state =
      next_seed.fetch_add(0x9E3779B97F4A7C15ull, std::memory_order_relaxed);
  return SplitMix64(&state) < threshold_;
}

std::string FormatRequestLine(const RequestLogLine& line) {
  std::string text = "model=";
  AppendJsonString(line.model, &text);
  text.append(" version=");
  AppendJsonString(line.version, &text);
  text.append(" id=");
  AppendJsonString(line.id, &text);
  absl::StrAppend(&text, " status=", absl::StatusCodeToString(line.code),
                  " total_us=", line.total_us, " batch_size=", line.batch_size);
  return text;
}

void LogRequest(const RequestLogLine& line) {
  std::shared_ptr<spdlog::logger> logger = spdlog::get(kRequestLogger);
  if (logger == nullptr || !logger->should_log(spdlog::level::info)) return;
  logger->info("{}", FormatRequestLine(line));
}

}  // namespace onyx::server
