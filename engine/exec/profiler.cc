#include "exec/profiler.h"

#include <pthread.h>

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrCat("\\u00", c < 16 ? "0" : "", absl::Hex(static_cast<int>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Profiler::Profiler(std::string file_prefix) : origin_ns_(SteadyNanos()), prefix_(std::move(file_prefix)) {}

void Profiler::EnableAll() { all_ = true; }

void Profiler::EnableRuns(int64_t runs) { remaining_ = runs; }

void Profiler::SetPrefix(std::string prefix) {
  absl::MutexLock lock(&mu_);
  prefix_ = std::move(prefix);
}

bool Profiler::BeginRun() {
  if (all_.load(std::memory_order_relaxed)) return true;
  int64_t left = remaining_.load(std::memory_order_relaxed);
  while (left > 0) {
    if (remaining_.compare_exchange_weak(left, left - 1)) return true;
  }
  return false;
}

int64_t Profiler::NowMicros() const { return (SteadyNanos() - origin_ns_) / 1000; }

void Profiler::Record(ProfileEvent event) {
  event.thread = static_cast<uint64_t>(pthread_self()) % 100000;
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
}

void Profiler::EndRun(std::string label, int64_t start_us) {
  ProfileEvent event;
  event.name = std::move(label);
  event.category = "run";
  event.start_us = start_us;
  event.duration_us = NowMicros() - start_us;
  event.thread = static_cast<uint64_t>(pthread_self()) % 100000;
  // Counted under the lock that Write() clears under, so the count always
  // matches the "run" events of the next file.
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
  recorded_runs_.fetch_add(1, std::memory_order_relaxed);
}

absl::StatusOr<std::string> Profiler::Write() {
  std::vector<ProfileEvent> events;
  std::string path;
  {
    absl::MutexLock lock(&mu_);
    events.swap(events_);
    recorded_runs_ = 0;
    path = absl::StrCat(prefix_, "_", files_++, ".json");
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("cannot write profile '", path, "'"));
  out << "{\"traceEvents\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    const ProfileEvent& e = events[i];
    out << (i ? ",\n" : "\n") << "{\"name\":\"" << JsonEscape(e.name) << "\",\"cat\":\"" << JsonEscape(e.category)
        << "\",\"ph\":\"X\",\"ts\":" << e.start_us << ",\"dur\":" << e.duration_us << ",\"pid\":1,\"tid\":" << e.thread
        << ",\"args\":{\"op_type\":\"" << JsonEscape(e.op_type) << "\",\"provider\":\"" << JsonEscape(e.provider)
        << "\",\"input_shapes\":\"" << JsonEscape(e.shapes) << "\"}}";
  }
  out << "\n],\"displayTimeUnit\":\"ms\"}\n";
  if (!out) return absl::InternalError(absl::StrCat("cannot write profile '", path, "'"));
  return path;
}

}  // namespace onyx
