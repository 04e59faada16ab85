// Profiler: per-node timing of runs, written as a Chrome trace
// (chrome://tracing, Perfetto). Recording is switched on for all runs
// (SessionOptions::enable_profiling) or for the next N runs (StartProfiling).
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace onyx {

struct ProfileEvent {
  std::string name;                 // node label (the model's label for a whole run)
  std::string category = "kernel";  // "kernel" per node, "run" per session run
  std::string op_type;
  std::string provider;
  std::string shapes;    // input shapes, e.g. "[1,3,224,224],[64,3,7,7]"
  int64_t start_us = 0;  // since the profiler was created
  int64_t duration_us = 0;
  uint64_t thread = 0;
};

class Profiler {
 public:
  explicit Profiler(std::string file_prefix);

  // Records every run from now on, or only the next `runs` runs (0 cancels
  // what is left of an earlier count).
  void EnableAll();
  void EnableRuns(int64_t runs);
  // Files written from now on are "<prefix>_<n>.json".
  void SetPrefix(std::string prefix);
  // Called once per run: whether this run records events.
  bool BeginRun();
  void Record(ProfileEvent event);
  // Called when a recorded run ends: one "run" event spanning it, and counts it.
  void EndRun(std::string label, int64_t start_us);
  // Runs ended since the last Write().
  int64_t recorded_runs() const { return recorded_runs_.load(std::memory_order_relaxed); }
  int64_t NowMicros() const;

  // Writes the events so far as "<prefix>_<n>.json", clears them, and returns
  // the path. INTERNAL when the file cannot be written.
  absl::StatusOr<std::string> Write();

 private:
  const int64_t origin_ns_;
  std::atomic<bool> all_{false};
  std::atomic<int64_t> remaining_{0};
  std::atomic<int64_t> recorded_runs_{0};
  absl::Mutex mu_;
  std::string prefix_ ABSL_GUARDED_BY(mu_);
  std::vector<ProfileEvent> events_ ABSL_GUARDED_BY(mu_);
  int files_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace onyx
