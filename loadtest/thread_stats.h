// ThreadStats: what one onyx-load thread measured since the collector last
// drained it, and LevelTotals: what a level measured in all, once drained.
//
//   ThreadStats stats(num_models);                 // one per sending/reaping thread
//   stats.RecordDispatch(level, model, lag_ns);     // the pacer, at each scheduled send
//   stats.RecordCompletion({level, model, intended, sent, done, code, message, peer});
//   stats.DrainInto(&window, &totals_by_level);     // the collector, once a second
//
// Histograms are allocated on first use and reused, so the hot path never
// allocates (an error message or a new peer address does, once per distinct
// text). Memory stays flat however long the run: per-request data is folded
// into fixed-size histograms and counters, never kept.
//
// Thread-safe: the owning thread records, the collector drains; a mutex that
// only the once-a-second drain contends for keeps them apart.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "loadtest/histogram.h"

namespace onyx::load {

// gRPC status codes 0..16; kMismatch for an output --validate rejected.
inline constexpr int kMismatch = 100;
std::string CodeName(int code);

struct ModelTotals {
  std::unique_ptr<Histogram> response, service;  // allocated on first completion
  int64_t intended = 0, dropped = 0, sent_in_span = 0, ok = 0, failed = 0;
  std::map<std::pair<int, std::string>, int64_t> errors;  // (code, message) -> count

  void MergeFrom(ModelTotals& other);  // adds other's counts, then resets other
};

struct LevelTotals {
  std::vector<ModelTotals> models;
  std::unique_ptr<Histogram> lag;
  int64_t late = 0;  // dispatches more than 1 ms behind schedule
  std::map<std::string, int64_t, std::less<>> peers;

  explicit LevelTotals(int num_models) : models(num_models) {}
  void MergeFrom(LevelTotals& other);
};

struct WindowTotals {
  Histogram response, service;
  int64_t dispatched = 0, ok = 0, failed = 0, dropped = 0;
  void MergeFrom(WindowTotals& other);
};

struct Completion {
  int level = -1;  // -1: warm-up (counted in windows, not in levels)
  int model = 0;
  int64_t intended_ns = 0, sent_ns = 0, done_ns = 0;
  int code = 0;
  absl::string_view message;
  absl::string_view peer;
};

class ThreadStats {
 public:
  explicit ThreadStats(int num_models) : num_models_(num_models) {}

  // A scheduled send: counts it as intended, its lag (open loop; a closed
  // loop passes -1: no schedule) and whether it was dropped.
  void RecordDispatch(int level, int model, int64_t lag_ns, bool dropped);
  // A request written to the wire within its level's measured span.
  void RecordSentInSpan(int level, int model);
  void RecordCompletion(const Completion& c);

  // Adds everything recorded since the last drain to `window` and to
  // `levels` (indexed by level; grown as needed), then forgets it.
  void DrainInto(WindowTotals* window, std::vector<std::unique_ptr<LevelTotals>>* levels);

 private:
  LevelTotals& Level(int level) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int num_models_;
  absl::Mutex mu_;
  WindowTotals window_ ABSL_GUARDED_BY(mu_);
  // (level, totals) for the levels touched since the last drain.
  std::vector<std::pair<int, std::unique_ptr<LevelTotals>>> levels_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<LevelTotals>> spare_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::load
