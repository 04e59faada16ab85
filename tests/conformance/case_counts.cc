#include "tests/conformance/case_counts.h"

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onyx::conformance {

absl::StatusOr<CaseCounts> ReadCaseCounts(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  CaseCounts counts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const absl::string_view text = absl::StripAsciiWhitespace(absl::string_view(line).substr(0, line.find('#')));
    if (text.empty()) continue;
    // The count is the last word; the op is the rest ("Gelu (expanded)").
    const size_t space = text.find_last_of(" \t");
    const absl::string_view op =
        space == absl::string_view::npos ? "" : absl::StripTrailingAsciiWhitespace(text.substr(0, space));
    int count = 0;
    if (op.empty() || !absl::SimpleAtoi(text.substr(space + 1), &count) || count < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": expected '<op> <positive count>', got '", text, "'"));
    }
    counts[std::string(op)] = count;
  }
  return counts;
}

absl::Status WriteCaseCounts(const std::string& path, const CaseCounts& counts) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  out << "# Conformance cases per op that a full run must count at least; see README.md.\n"
         "# Regenerate with: conformance_runner CASES_DIR --update-min-case-counts THIS_FILE\n";
  for (const auto& [op, count] : counts) out << op << " " << count << "\n";
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

std::vector<std::string> CasesBelowMinimum(const CaseCounts& counted, const CaseCounts& minimum) {
  std::vector<std::string> lines;
  for (const auto& [op, want] : minimum) {
    const auto it = counted.find(op);
    const int got = it == counted.end() ? 0 : it->second;
    if (got < want) lines.push_back(absl::StrCat(op, ": ", got, " cases, want at least ", want));
  }
  return lines;
}

}  // namespace onyx::conformance
