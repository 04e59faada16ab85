#include "tests/conformance/expected_failures.h"

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onyx::conformance {

absl::StatusOr<FailureList> ReadFailureList(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  FailureList list;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t hash = line.find('#');
    const absl::string_view name = absl::StripAsciiWhitespace(absl::string_view(line).substr(0, hash));
    if (name.empty()) continue;
    if (name.find_first_of(" \t") != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": expected one case name, got '", name, "'"));
    }
    const absl::string_view reason =
        hash == std::string::npos ? "" : absl::StripAsciiWhitespace(absl::string_view(line).substr(hash + 1));
    list[std::string(name)] = std::string(reason);
  }
  return list;
}

absl::Status WriteFailureList(const std::string& path, const FailureList& failures, size_t max_reason_chars) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  out << "# ONNX backend node tests that are known to fail; see README.md.\n"
         "# Regenerate with: conformance_runner CASES_DIR --update-expected-failures THIS_FILE\n"
         "# The list only shrinks: a listed case that passes fails the run.\n";
  for (const auto& [name, reason] : failures) {
    std::string text(reason.substr(0, reason.find('\n')));
    if (text.size() > max_reason_chars) text = text.substr(0, max_reason_chars - 3) + "...";
    out << name;
    if (!text.empty()) out << "  # " << text;
    out << "\n";
  }
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

ListDiff DiffWithList(const std::map<std::string, bool>& passed, const FailureList& list) {
  ListDiff diff;
  for (const auto& [name, ok] : passed) {
    const bool listed = list.count(name) > 0;
    if (!ok && !listed) diff.unexpected_failures.push_back(name);
    if (ok && listed) diff.stale_entries.push_back(name);
  }
  return diff;
}

}  // namespace onyx::conformance
