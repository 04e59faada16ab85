// LatencyLog: a fixed-capacity log of latencies and the load's summary.
//
//   LatencyLog log(1 << 22);          // allocates and touches the buffer now
//   log.Add(1234);                    // from any thread, no allocation
//   LoadSummary s = Summarize(log, rows_per_item, window_seconds);
//
// Add() never allocates (the buffer is zeroed up front so no page fault lands
// inside a measured interval); entries beyond the capacity are counted in
// dropped() but not kept. Thread-safe for Add(); read only after the writers
// have stopped.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace onyx::bench {

class LatencyLog {
 public:
  explicit LatencyLog(size_t capacity) : ns_(capacity, 0) {}

  void Add(int64_t ns) {
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i < ns_.size()) ns_[i] = ns;
  }
  // Latencies logged (including dropped ones).
  int64_t count() const { return static_cast<int64_t>(next_.load()); }
  int64_t dropped() const { return std::max<int64_t>(0, count() - static_cast<int64_t>(ns_.size())); }
  // The kept latencies, sorted ascending.
  std::vector<int64_t> Sorted() const {
    std::vector<int64_t> kept(ns_.begin(), ns_.begin() + std::min<size_t>(next_.load(), ns_.size()));
    std::sort(kept.begin(), kept.end());
    return kept;
  }

 private:
  std::vector<int64_t> ns_;
  std::atomic<size_t> next_{0};
};

// What one load run measured. Items are requests (served) or Run() calls
// (in-process); each carries `batch` rows.
struct LoadSummary {
  int64_t items = 0;          // completed inside the measured window
  int64_t rows = 0;           // items * batch
  double seconds = 0;         // length of the measured window
  double items_per_s = 0;
  double rows_per_s = 0;
  double mean_us = 0, p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  int64_t errors = 0;         // failed or malformed replies, warm-up included
  std::string first_error;    // the first of them, for the report
  int64_t dropped = 0;        // latencies beyond the log's capacity
};

// Nearest-rank percentile (q in [0, 1]) of sorted `ns`, in microseconds.
inline double PercentileUs(const std::vector<int64_t>& ns, double q) {
  if (ns.empty()) return 0;
  size_t rank = static_cast<size_t>(q * static_cast<double>(ns.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, ns.size());
  return static_cast<double>(ns[rank - 1]) / 1000.0;
}

inline LoadSummary Summarize(const LatencyLog& log, int64_t batch, double seconds) {
  LoadSummary s;
  const std::vector<int64_t> ns = log.Sorted();
  s.items = log.count();
  s.rows = s.items * batch;
  s.seconds = seconds;
  s.items_per_s = seconds > 0 ? static_cast<double>(s.items) / seconds : 0;
  s.rows_per_s = seconds > 0 ? static_cast<double>(s.rows) / seconds : 0;
  double total = 0;
  for (int64_t v : ns) total += static_cast<double>(v);
  s.mean_us = ns.empty() ? 0 : total / static_cast<double>(ns.size()) / 1000.0;
  s.p50_us = PercentileUs(ns, 0.50);
  s.p99_us = PercentileUs(ns, 0.99);
  s.p999_us = PercentileUs(ns, 0.999);
  s.max_us = ns.empty() ? 0 : static_cast<double>(ns.back()) / 1000.0;
  s.dropped = log.dropped();
  return s;
}

}  // namespace onyx::bench
