// Collector: folds every thread's ThreadStats into one window (the second
// just ended) and into per-level totals. Used by the runner's thread only.
//
//   Collector c(num_models);  c.Register(worker.pacer_stats()); ...
//   c.Drain();  WindowTotals& w = c.window();  ...  w reset by the next Drain
//   std::unique_ptr<LevelTotals> t = c.TakeLevel(3);   // once level 3 has drained
//
// Thread-compatible (the ThreadStats it drains are thread-safe).
#pragma once

#include <memory>
#include <vector>

#include "loadtest/thread_stats.h"

namespace onyx::load {

class Collector {
 public:
  explicit Collector(int num_models) : num_models_(num_models) {}

  void Register(ThreadStats* stats) { threads_.push_back(stats); }

  // Starts a new window and drains every thread into it and the level totals.
  void Drain() {
    window_.response.Reset();
    window_.service.Reset();
    window_.dispatched = window_.ok = window_.failed = window_.dropped = 0;
    DrainMore();
  }
  // Drains into the current window without starting a new one.
  void DrainMore() {
    for (ThreadStats* t : threads_) t->DrainInto(&window_, &levels_);
  }
  WindowTotals& window() { return window_; }

  // The totals of `level` (empty ones if nothing was recorded), released.
  std::unique_ptr<LevelTotals> TakeLevel(int level) {
    if (level < static_cast<int>(levels_.size()) && levels_[level]) return std::move(levels_[level]);
    return std::make_unique<LevelTotals>(num_models_);
  }

 private:
  const int num_models_;
  std::vector<ThreadStats*> threads_;
  WindowTotals window_;
  std::vector<std::unique_ptr<LevelTotals>> levels_;
};

}  // namespace onyx::load
