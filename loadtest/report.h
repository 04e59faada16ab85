// onyx-load's reports, each written from a RunResult: the text summary
// (stdout), --json (versioned, everything including histogram buckets),
// --csv (one row per level and model) and --html (one self-contained file,
// inline SVG, no script, nothing fetched).
//
//   std::cout << TextReport(result);
//   RETURN_IF_ERROR(WriteTextFile("--json", path, JsonReport(result)));
//
// Pure functions except WriteTextFile; thread-safe.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "loadtest/result.h"

namespace onyx::load {

std::string TextReport(const RunResult& r);
std::string JsonReport(const RunResult& r);
std::string CsvReport(const RunResult& r);
std::string HtmlReport(const RunResult& r);

// "p50", "p99.9".
std::string PercentileName(double q);

// INVALID_ARGUMENT naming `flag` and the path when it cannot be written.
absl::Status WriteTextFile(absl::string_view flag, const std::string& path, const std::string& text);

}  // namespace onyx::load
