// The run as a list of phases: each phase is one continuous load (a schedule
// or a fixed concurrency) started after the previous one drained, split into
// measured levels by intended send time.
//
//   ASSIGN_OR_RETURN(std::vector<Phase> phases, PlanPhases(options));
//
// A sweep is one phase per value (each with its own warm-up); a step ramp is
// one phase whose levels follow each other without a pause, so queues carry
// over as they would in production; a linear ramp is one phase with one level.
// --find-max plans its phases as it goes (MakeRatePhase). Pure functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loadtest/options.h"
#include "loadtest/schedule.h"

namespace onyx::load {

struct LevelSpan {
  std::string label;                  // "rate 1000/s", "concurrency 8", "ramp 100->2000/s"
  double start_s = 0, end_s = 0;      // measured, intended-send time from the phase start
  double rate_from = 0, rate_to = 0;  // open loop
  int64_t requests = 0;               // closed loop with --requests: measured sends, then the level ends
};

struct Phase {
  bool open_loop = true;
  RateProfile profile;  // open loop: the whole phase, warm-up included
  int concurrency = 0;  // closed loop
  double warmup_s = 0;
  std::vector<LevelSpan> levels;
  double end_s() const { return levels.empty() ? warmup_s : levels.back().end_s; }
};

absl::StatusOr<std::vector<Phase>> PlanPhases(const Options& options);

// One open-loop phase at `rate`: --warmup, then --duration (or --requests/rate).
Phase MakeRatePhase(const Options& options, double rate);

std::string RateLabel(double rate);

}  // namespace onyx::load
