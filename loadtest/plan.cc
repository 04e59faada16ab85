#include "loadtest/plan.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "loadtest/units.h"

namespace onyx::load {

std::string RateLabel(double rate) { return absl::StrCat("rate ", FormatCount(rate), "/s"); }

Phase MakeRatePhase(const Options& o, double rate) {
  Phase p;
  p.open_loop = true;
  p.warmup_s = o.warmup_s;
  const double measure = o.requests > 0 ? static_cast<double>(o.requests) / rate : o.duration_s;
  p.profile.Add(o.warmup_s, rate, rate);
  p.profile.Add(measure, rate, rate);
  p.levels.push_back({RateLabel(rate), o.warmup_s, o.warmup_s + measure, rate, rate, 0});
  return p;
}

absl::StatusOr<std::vector<Phase>> PlanPhases(const Options& o) {
  std::vector<Phase> phases;
  if (!o.open_loop()) {
    for (double c : o.concurrency) {
      Phase p;
      p.open_loop = false;
      p.concurrency = static_cast<int>(c);
      p.warmup_s = o.warmup_s;
      const double end = o.requests > 0 ? INFINITY : o.warmup_s + o.duration_s;
      p.levels.push_back({absl::StrCat("concurrency ", p.concurrency), o.warmup_s, end, 0, 0, o.requests});
      phases.push_back(std::move(p));
    }
    return phases;
  }
  if (o.ramp.kind == Ramp::Kind::kLinear) {
    Phase p;
    p.warmup_s = o.warmup_s;
    p.profile.Add(o.warmup_s, o.ramp.from, o.ramp.from);
    p.profile.Add(o.duration_s, o.ramp.from, o.ramp.to);
    p.levels.push_back({absl::StrCat("ramp ", FormatCount(o.ramp.from), "->", FormatCount(o.ramp.to), "/s"), o.warmup_s,
                        o.warmup_s + o.duration_s, o.ramp.from, o.ramp.to, 0});
    phases.push_back(std::move(p));
    return phases;
  }
  if (o.ramp.kind == Ramp::Kind::kStep) {
    Phase p;
    p.warmup_s = o.warmup_s;
    p.profile.Add(o.warmup_s, o.ramp.from, o.ramp.from);
    double t = o.warmup_s;
    const int steps = static_cast<int>(std::floor((o.ramp.to - o.ramp.from) / o.ramp.step + 1e-9)) + 1;
    for (int i = 0; i < steps; ++i) {
      const double rate = o.ramp.from + i * o.ramp.step;
      p.profile.Add(o.ramp.hold_s, rate, rate);
      p.levels.push_back({RateLabel(rate), t, t + o.ramp.hold_s, rate, rate, 0});
      t += o.ramp.hold_s;
    }
    phases.push_back(std::move(p));
    return phases;
  }
  for (double rate : o.rate) phases.push_back(MakeRatePhase(o, rate));
  return phases;
}

}  // namespace onyx::load
