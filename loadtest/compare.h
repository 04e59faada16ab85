// `onyx-load compare A.json B.json [--html FILE]`: two runs side by side —
// per level, throughput and the response-time percentiles of each with the
// change from A to B — and, with --html, one report that overlays their
// percentile curves and sweep curves.
//
// Exit 0 after printing the comparison, 2 for bad arguments or unreadable
// files (naming the file and what is wrong).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loadtest/result.h"

namespace onyx::load {

int CompareMain(const std::vector<std::string>& args);

// Reads a file --json wrote (format_version 1) back into a RunResult: levels
// with their histograms, windows and server series. INVALID_ARGUMENT naming
// the file when it is not one.
absl::StatusOr<RunResult> ReadJsonReport(const std::string& path);

std::string CompareText(const RunResult& a, const std::string& a_name, const RunResult& b, const std::string& b_name);
std::string CompareHtml(const RunResult& a, const std::string& a_name, const RunResult& b, const std::string& b_name);

}  // namespace onyx::load
