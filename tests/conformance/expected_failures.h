// The list of cases known to fail (tests/conformance/expected_failures.txt):
//
//   # comment
//   test_abs  # UNIMPLEMENTED: no CPU kernel for Abs
//
// One case name per line, optionally followed by "# reason". The list only
// shrinks: a listed case that passes is a stale entry and fails the run, like a
// failing case that is not listed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace onyx::conformance {

// case name -> reason ("" when the line has none).
using FailureList = std::map<std::string, std::string>;

// Parses the file at `path`. NOT_FOUND when it cannot be opened, INVALID_ARGUMENT
// naming the line for a line with more than one word before the comment.
absl::StatusOr<FailureList> ReadFailureList(const std::string& path);

// Writes `failures` sorted by name, each reason shortened to one line of at most
// `max_reason_chars` characters, under a header saying how to regenerate it.
absl::Status WriteFailureList(const std::string& path, const FailureList& failures,
                              size_t max_reason_chars = 100);

struct ListDiff {
  std::vector<std::string> unexpected_failures;  // failed, not listed
  std::vector<std::string> stale_entries;        // listed, passed
};

// Compares the results of the cases that ran (name -> passed) with `list`.
// Listed cases that did not run are in neither group.
ListDiff DiffWithList(const std::map<std::string, bool>& passed, const FailureList& list);

}  // namespace onyx::conformance
