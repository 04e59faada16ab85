#include "loadtest/sweep.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "loadtest/status_macros.h"
#include "loadtest/units.h"

namespace onyx::load {

absl::StatusOr<std::vector<double>> ParseLevels(absl::string_view what, absl::string_view text, double low,
                                                double high) {
  constexpr size_t kMaxLevels = 1000;
  std::vector<double> levels;
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() == 1) {
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      absl::StatusOr<double> v = ParseNumber(what, item, low, high);
      if (!v.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": expected numbers in [", low, ", ", high, "], got '", text, "'"));
      }
      levels.push_back(*v);
    }
    if (levels.size() > kMaxLevels) return absl::InvalidArgumentError(absl::StrCat(what, ": more than 1000 levels"));
    return levels;
  }
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected V, V1,V2,..., FROM:TO:xFACTOR or FROM:TO:+STEP (", why, "), got '", text, "'"));
  };
  if (parts.size() != 3 || parts[2].size() < 2) return bad("three fields");
  absl::StatusOr<double> from_or = ParseNumber(what, parts[0], low, high);
  absl::StatusOr<double> to_or = ParseNumber(what, parts[1], low, high);
  if (!from_or.ok() || !to_or.ok()) return bad(absl::StrCat("FROM and TO in [", low, ", ", high, "]"));
  const double from = *from_or, to = *to_or;
  if (to < from) return bad("TO below FROM");
  const char op = parts[2][0];
  double by = 0;
  if (!absl::SimpleAtod(parts[2].substr(1), &by) || !std::isfinite(by)) return bad("a number after x or +");
  if (op == 'x' && by > 1) {
    for (double v = from; v <= to * (1 + 1e-9) && levels.size() <= kMaxLevels; v *= by) levels.push_back(v);
  } else if (op == '+' && by > 0) {
    for (int i = 0; from + i * by <= to * (1 + 1e-9) && levels.size() <= kMaxLevels; ++i)
      levels.push_back(from + i * by);
  } else {
    return bad("xFACTOR needs FACTOR > 1, +STEP needs STEP > 0");
  }
  if (levels.size() > kMaxLevels) return bad("more than 1000 levels");
  return levels;
}

absl::StatusOr<Ramp> ParseRamp(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("--ramp: expected linear:FROM:TO or step:FROM:TO:+STEP:HOLD, got '", text, "'"));
  };
  Ramp ramp;
  if (parts.size() == 3 && parts[0] == "linear") {
    ramp.kind = Ramp::Kind::kLinear;
  } else if (parts.size() == 5 && parts[0] == "step") {
    ramp.kind = Ramp::Kind::kStep;
  } else {
    return bad();
  }
  ASSIGN_OR_RETURN(ramp.from, ParseNumber("--ramp FROM", parts[1], 0, 1e9));
  ASSIGN_OR_RETURN(ramp.to, ParseNumber("--ramp TO", parts[2], 0, 1e9));
  if (ramp.kind == Ramp::Kind::kStep) {
    if (parts[3].size() < 2 || (parts[3][0] != '+' && parts[3][0] != '-')) return bad();
    ASSIGN_OR_RETURN(double step, ParseNumber("--ramp STEP", parts[3].substr(1), 1e-9, 1e9));
    ramp.step = parts[3][0] == '+' ? step : -step;
    if ((ramp.to - ramp.from) * ramp.step < 0) return bad();
    ASSIGN_OR_RETURN(ramp.hold_s, ParseSeconds("--ramp HOLD", parts[4]));
    if (ramp.hold_s <= 0) return bad();
    if (std::abs(ramp.to - ramp.from) / std::abs(ramp.step) > 1000) {
      return absl::InvalidArgumentError(absl::StrCat("--ramp: more than 1000 steps in '", text, "'"));
    }
  }
  return ramp;
}

}  // namespace onyx::load
