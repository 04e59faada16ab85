#include "loadtest/units.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onyx::load {

absl::StatusOr<double> ParseSeconds(absl::string_view what, absl::string_view text) {
  struct Unit {
    absl::string_view suffix;
    double seconds;
  };
  // Longest suffixes first so "ms" is not read as "s".
  static constexpr Unit kUnits[] = {{"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"s", 1}, {"m", 60}, {"h", 3600}};
  absl::string_view number = text;
  double scale = 1;
  for (const Unit& unit : kUnits) {
    if (text.size() > unit.suffix.size() && text.substr(text.size() - unit.suffix.size()) == unit.suffix) {
      number = text.substr(0, text.size() - unit.suffix.size());
      scale = unit.seconds;
      break;
    }
  }
  double value = 0;
  if (!absl::SimpleAtod(number, &value) || !std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected a duration such as 10s, 500ms or 2m, got '", text, "'"));
  }
  return value * scale;
}

absl::StatusOr<double> ParseNumber(absl::string_view what, absl::string_view text, double low, double high) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || value < low || value > high) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected a number in [", low, ", ", high, "], got '", text, "'"));
  }
  return value;
}

absl::StatusOr<int64_t> ParseInt(absl::string_view what, absl::string_view text, int64_t low, int64_t high) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < low || value > high) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected an integer in [", low, ", ", high, "], got '", text, "'"));
  }
  return value;
}

std::string FormatNs(double ns) {
  const double a = std::abs(ns);
  if (a < 1e3) return absl::StrFormat("%.0fns", ns);
  if (a < 1e6) return absl::StrFormat("%.*fus", a < 1e4 ? 2 : a < 1e5 ? 1 : 0, ns / 1e3);
  if (a < 1e9) return absl::StrFormat("%.*fms", a < 1e7 ? 2 : a < 1e8 ? 1 : 0, ns / 1e6);
  return absl::StrFormat("%.*fs", a < 1e10 ? 2 : a < 1e11 ? 1 : 0, ns / 1e9);
}

std::string FormatCount(double value) {
  const double a = std::abs(value);
  if (a < 1e3) return a < 10 && a != std::floor(a) ? absl::StrFormat("%.2f", value) : absl::StrFormat("%.0f", value);
  if (a < 1e6) return absl::StrFormat("%.*fk", a < 1e4 ? 2 : a < 1e5 ? 1 : 0, value / 1e3);
  return absl::StrFormat("%.*fM", a < 1e7 ? 2 : a < 1e8 ? 1 : 0, value / 1e6);
}

std::string FormatPercent(double share) {
  const double p = share * 100;
  return p != 0 && std::abs(p) < 0.1 ? absl::StrFormat("%.3f%%", p) : absl::StrFormat("%.2f%%", p);
}

}  // namespace onyx::load
