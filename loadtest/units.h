// Parsing and printing of the quantities on onyx-load's command line and in
// its reports: durations ("10s", "250ms", "2m"), rates, percentages.
//
// Parse functions return INVALID_ARGUMENT naming `what` (the flag) and the
// text received. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace onyx::load {

// "1.5s", "250ms", "400us", "2m", "1h", or a bare number of seconds; >= 0.
absl::StatusOr<double> ParseSeconds(absl::string_view what, absl::string_view text);
// A finite number (no unit) in [low, high].
absl::StatusOr<double> ParseNumber(absl::string_view what, absl::string_view text, double low, double high);
// An integer in [low, high].
absl::StatusOr<int64_t> ParseInt(absl::string_view what, absl::string_view text, int64_t low, int64_t high);

// "812us", "1.23ms", "4.56s": three significant digits, unit by size.
std::string FormatNs(double ns);
// "12.3k", "950", "1.20M" (per-second rates and counts).
std::string FormatCount(double value);
// "0.12%".
std::string FormatPercent(double share);

}  // namespace onyx::load
