// The one clock onyx-load times with: CLOCK_MONOTONIC in nanoseconds, and an
// absolute-time sleep on the same clock (so a late wake-up never shifts the
// schedule that follows).
#pragma once

#include <time.h>

#include <cstdint>

namespace onyx::load {

inline int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Sleeps until NowNs() >= deadline_ns (returns at once if already past).
inline void SleepUntilNs(int64_t deadline_ns) {
  timespec ts{static_cast<time_t>(deadline_ns / 1'000'000'000), static_cast<long>(deadline_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

}  // namespace onyx::load
