// The committed minimum number of conformance cases per op
// (tests/conformance/min_case_counts.txt):
//
//   # comment
//   Conv  7
//
// One op and a count per line. A run in which an op has fewer counted cases
// than its minimum (a case module that no longer imports, a generator change)
// fails, so a whole op family cannot vanish while the run stays green.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace onyx::conformance {

// op type (as CaseOpType names it) -> number of cases.
using CaseCounts = std::map<std::string, int>;

// Parses the file at `path`. NOT_FOUND when it cannot be opened,
// INVALID_ARGUMENT naming the line for anything but "<op> <count>".
absl::StatusOr<CaseCounts> ReadCaseCounts(const std::string& path);

// Writes `counts` sorted by op under a header saying how to regenerate it.
absl::Status WriteCaseCounts(const std::string& path, const CaseCounts& counts);

// One line per op of `minimum` that has fewer cases in `counted` ("Conv: 3
// cases, want at least 7"); empty when every minimum is met. Ops that are not
// in `minimum` are not checked.
std::vector<std::string> CasesBelowMinimum(const CaseCounts& counted, const CaseCounts& minimum);

}  // namespace onyx::conformance
