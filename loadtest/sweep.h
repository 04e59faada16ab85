// Load levels from the command line: a single value, a list, or a range that
// sweeps ("1:64:x2" doubles from 1 to 64, "100:2000:+100" adds 100), and
// ramps ("linear:100:2000" / "step:100:1000:+100:5s").
//
// Errors are INVALID_ARGUMENT naming the flag and the text received. Pure
// functions; thread-safe.
#pragma once

#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace onyx::load {

// The levels of `text`: "V", "V1,V2,...", "FROM:TO:xF" (F > 1) or
// "FROM:TO:+S" (S > 0), each value in [low, high]; a range ends at the last
// value not past TO. At most 1000 levels.
absl::StatusOr<std::vector<double>> ParseLevels(absl::string_view what, absl::string_view text, double low,
                                                double high);

struct Ramp {
  enum class Kind { kNone, kLinear, kStep };
  Kind kind = Kind::kNone;
  double from = 0, to = 0;
  double step = 0;    // kStep: rate added per step (negative steps down)
  double hold_s = 0;  // kStep: seconds per step
};

// "linear:FROM:TO" (the rate moves from FROM to TO over --duration) or
// "step:FROM:TO:+S:HOLD" (FROM, FROM+S, ... up to TO, each held HOLD; "-S"
// steps down).
absl::StatusOr<Ramp> ParseRamp(absl::string_view text);

}  // namespace onyx::load
