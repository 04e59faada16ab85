// Turning what a level recorded (LevelTotals) into its LevelResult: per-model
// and combined latencies, error groups, send lag, and the two judgements the
// exit code rests on — saturated (the generator fell behind its own
// schedule) and unstable (response times kept rising through the level).
//
//   LevelResult r = SummarizeLevel(inputs, std::move(totals));
//
// Pure function; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loadtest/result.h"
#include "loadtest/thread_stats.h"

namespace onyx::load {

struct LevelInputs {
  int index = 0;
  std::string label;
  bool open_loop = true;
  double target_rate = 0, target_rate_end = 0;
  int concurrency = 0;
  double start_s = 0;     // since the run began
  double measured_s = 0;  // length of the measured span
  double cpu_s = 0;       // onyx-load's CPU over the level
  std::vector<std::string> model_names;
  double max_late_share = 0.05;
  const std::vector<WindowPoint>* windows = nullptr;  // the run's windows so far
};

LevelResult SummarizeLevel(const LevelInputs& in, std::unique_ptr<LevelTotals> totals);

// The unstable judgement alone: true (with a reason) when the mean p50 of
// the last third of `windows` is more than twice, and more than 1 ms above,
// that of the first third. Needs at least 6 windows with replies.
bool RisingLatency(const std::vector<WindowPoint>& windows, std::string* reason);

}  // namespace onyx::load
