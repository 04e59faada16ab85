// Runner::FindMax: the search behind --find-max.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "loadtest/runner.h"
#include "loadtest/units.h"

namespace onyx::load {

// Doubles the rate from the start until a probe misses the SLO (or halves it
// until one meets it), then bisects between the highest rate that met it and
// the lowest that did not until they are within --find-max-precision. A
// probe whose generator saturated counts as a miss: its numbers describe
// onyx-load, not the server. --rate FROM:TO:... bounds the search.
void Runner::FindMax() {
  const std::vector<double>& r = options_.rate;
  const double floor_rate = r.size() >= 2 ? r.front() : 1e-3;
  const double ceiling = r.size() >= 2 ? r.back() : 1e8;
  double rate = r.empty() ? 100 : r.front();
  double met = 0, missed = INFINITY;
  result_.find_max.ran = true;
  constexpr int kMaxProbes = 24;
  for (int probe = 0; probe < kMaxProbes; ++probe) {
    RunPhase(MakeRatePhase(options_, rate));
    LevelResult& level = result_.levels.back();
    level.slo_met = !level.saturated;
    for (const Criterion& c : options_.slo) {
      level.slo.push_back(c.Check(level.all, level));
      level.slo_met = level.slo_met && level.slo.back().met;
    }
    if (!options_.quiet) {
      std::fprintf(stderr, "find-max: %s %s the SLO%s\n", level.label.c_str(), level.slo_met ? "meets" : "misses",
                   level.saturated ? " (generator saturated)" : "");
    }
    if (level.slo_met && rate > met) {
      met = rate;
      result_.find_max.level = level.index;
    }
    if (!level.slo_met) missed = std::min(missed, rate);
    if (std::isinf(missed)) {
      if (rate >= ceiling) break;
      rate = std::min(rate * 2, ceiling);
    } else if (met == 0) {
      if (rate <= floor_rate) break;
      rate = std::max(rate / 2, floor_rate);
    } else {
      if ((missed - met) / met <= options_.find_max_precision) break;
      rate = (met + missed) / 2;
    }
  }
  result_.find_max.found = met > 0;
  result_.find_max.max_rate = met;
}

}  // namespace onyx::load
