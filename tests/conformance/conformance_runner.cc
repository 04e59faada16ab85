// conformance_runner: runs the ONNX backend node tests through the engine.
//
//   conformance_runner CASES_DIR [--expected-failures FILE]
//       [--update-expected-failures FILE] [--min-case-counts FILE]
//       [--update-min-case-counts FILE] [--filter TEXT] [--jobs N]
//       [--timeout SECONDS] [--memory-limit-mb N] [--show-case-output]
//       [--rtol R] [--atol A]
//
// Prints "PASS <case>" / "FAIL <case>: <reason>" per case, a per-op summary and
// "conformance: P/T passed (X%), excluded E training and random-output cases". See README.md.
// Exit status: 0 when the run matches the expected-failures list (or, without a
// list, when every counted case passes) and, with --min-case-counts and no
// --filter, every op has at least its committed number of cases; 1 otherwise;
// 2 for usage errors.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/conformance/case_counts.h"
#include "tests/conformance/case_runner.h"
#include "tests/conformance/expected_failures.h"
#include "tests/conformance/isolation.h"

namespace onyx::conformance {
namespace {

struct Args {
  std::string cases_dir;
  std::string expected_failures;
  std::string update_expected_failures;
  std::string min_case_counts;
  std::string update_min_case_counts;
  std::string filter;
  IsolationOptions isolation;
  Tolerance tolerance;
};

constexpr char kUsage[] =
    "usage: conformance_runner CASES_DIR [--expected-failures FILE] [--update-expected-failures FILE]\n"
    "       [--min-case-counts FILE] [--update-min-case-counts FILE]\n"
    "       [--filter TEXT] [--jobs N] [--timeout SECONDS] [--memory-limit-mb N] [--show-case-output]\n"
    "       [--rtol R] [--atol A]\n";

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= argc) return false;
      into = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--expected-failures") {
      if (!value(args.expected_failures)) return false;
    } else if (arg == "--update-expected-failures") {
      if (!value(args.update_expected_failures)) return false;
    } else if (arg == "--min-case-counts") {
      if (!value(args.min_case_counts)) return false;
    } else if (arg == "--update-min-case-counts") {
      if (!value(args.update_min_case_counts)) return false;
    } else if (arg == "--filter") {
      if (!value(args.filter)) return false;
    } else if (arg == "--jobs") {
      if (!value(text) || !absl::SimpleAtoi(text, &args.isolation.jobs) || args.isolation.jobs < 1) return false;
    } else if (arg == "--timeout") {
      if (!value(text) || !absl::SimpleAtod(text, &args.isolation.timeout_seconds)) return false;
    } else if (arg == "--memory-limit-mb") {
      if (!value(text) || !absl::SimpleAtoi(text, &args.isolation.memory_limit_mb)) return false;
    } else if (arg == "--rtol") {
      if (!value(text) || !absl::SimpleAtod(text, &args.tolerance.rtol)) return false;
    } else if (arg == "--atol") {
      if (!value(text) || !absl::SimpleAtod(text, &args.tolerance.atol)) return false;
    } else if (arg == "--show-case-output") {
      args.isolation.show_child_output = true;
    } else if (absl::StartsWith(arg, "--") || !args.cases_dir.empty()) {
      return false;
    } else {
      args.cases_dir = arg;
    }
  }
  return !args.cases_dir.empty();
}

std::string FirstLine(absl::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

void PrintGroup(const char* title, const std::vector<std::string>& names, const FailureList& reasons) {
  std::cout << title << " (" << names.size() << "):\n";
  for (const std::string& name : names) {
    auto it = reasons.find(name);
    std::cout << "  " << name;
    if (it != reasons.end() && !it->second.empty()) std::cout << ": " << it->second;
    std::cout << "\n";
  }
}

// Reads `path` with `read` into `into` unless `path` is empty; false (the
// reason printed) when it cannot be read.
template <typename T>
bool ReadIfGiven(const std::string& path, absl::StatusOr<T> (*read)(const std::string&), T& into) {
  if (path.empty()) return true;
  absl::StatusOr<T> value = read(path);
  if (!value.ok()) {
    std::cerr << "conformance_runner: " << value.status().message() << "\n";
    return false;
  }
  into = *std::move(value);
  return true;
}

int Main(int argc, char** argv) {
  Args args;
  args.isolation.memory_limit_mb = 8192;
  if (!ParseArgs(argc, argv, args)) {
    std::cerr << kUsage;
    return 2;
  }
  if (!args.filter.empty() && !args.update_min_case_counts.empty()) {
    std::cerr << "conformance_runner: --update-min-case-counts needs a full run, not --filter\n";
    return 2;
  }
  FailureList expected;
  CaseCounts minimum;
  if (!ReadIfGiven(args.expected_failures, ReadFailureList, expected) ||
      !ReadIfGiven(args.min_case_counts, ReadCaseCounts, minimum)) {
    return 2;
  }
  auto all_cases = ListCases(args.cases_dir);
  if (!all_cases.ok() || all_cases->empty()) {
    std::cerr << "conformance_runner: no cases in '" << args.cases_dir << "'"
              << (all_cases.ok() ? "" : ": " + std::string(all_cases.status().message())) << "\n";
    return 2;
  }

  std::vector<std::string> cases;
  int excluded = 0;
  for (const std::string& name : *all_cases) {
    if (!args.filter.empty() && !absl::StrContains(name, args.filter)) continue;
    if (IsTrainingOnlyCase(name)) {
      std::cout << "SKIP " << name << ": training-only\n";
      ++excluded;
      continue;
    }
    if (IsRandomOutputCase(name)) {
      std::cout << "SKIP " << name << ": random output (one draw of numpy's generator)\n";
      ++excluded;
      continue;
    }
    cases.push_back(name);
  }
  std::vector<std::string> op_types;
  for (const std::string& name : cases) op_types.push_back(CaseOpType(args.cases_dir + "/" + name));

  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, bool> passed;
  FailureList failures;
  std::map<std::string, std::pair<int, int>> per_op;  // op -> (passed, total)
  CaseOptions case_options;
  case_options.tolerance = args.tolerance;
  RunIsolated(
      cases.size(), [&](size_t i) { return RunCase(args.cases_dir + "/" + cases[i], case_options); }, args.isolation,
      [&](size_t i, const absl::Status& result) {
    passed[cases[i]] = result.ok();
    auto& [op_passed, op_total] = per_op[op_types[i]];
    ++op_total;
    if (result.ok()) {
      ++op_passed;
      std::cout << "PASS " << cases[i] << "\n";
    } else {
      failures[cases[i]] = FirstLine(result.message());
      std::cout << "FAIL " << cases[i] << ": " << failures[cases[i]] << "\n";
    }
    std::cout.flush();
      });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << "\nper-op results (passed/total):\n";
  for (const auto& [op, counts] : per_op) {
    char line[160];
    std::snprintf(line, sizeof(line), "  %-36s %4d/%-4d%s\n", op.c_str(), counts.first, counts.second,
                  counts.first == counts.second ? "" : "  *");
    std::cout << line;
  }
  const int total = static_cast<int>(cases.size());
  const int pass_count = total - static_cast<int>(failures.size());
  char summary[200];
  std::snprintf(summary, sizeof(summary),
                "conformance: %d/%d passed (%.1f%%), excluded %d training and random-output cases\n", pass_count, total,
                total == 0 ? 0.0 : 100.0 * pass_count / total, excluded);
  std::cout << "\n" << summary;
  std::cout << "ran " << total << " cases in " << static_cast<int>(seconds + 0.5) << " s with " << args.isolation.jobs
            << " job(s)\n";

  CaseCounts counted;
  for (const auto& [op, counts] : per_op) counted[op] = counts.second;
  if (!args.update_min_case_counts.empty()) {
    absl::Status written = WriteCaseCounts(args.update_min_case_counts, counted);
    if (!written.ok()) {
      std::cerr << "conformance_runner: " << written.message() << "\n";
      return 2;
    }
    std::cout << "wrote the case counts of " << counted.size() << " ops to " << args.update_min_case_counts << "\n";
  }
  // A filtered run counts only some cases, so the minimum holds only for a full one.
  const std::vector<std::string> below =
      args.filter.empty() ? CasesBelowMinimum(counted, minimum) : std::vector<std::string>{};
  if (!below.empty()) {
    std::cout << "MISSING CASES: ops with fewer cases than " << args.min_case_counts << " requires (" << below.size()
              << "):\n";
    for (const std::string& line : below) std::cout << "  " << line << "\n";
  }

  if (!args.update_expected_failures.empty()) {
    // The list's reasons drop the "model '<case>': " that engine errors repeat.
    FailureList reasons;
    for (const auto& [name, reason] : failures) {
      reasons[name] = absl::StrReplaceAll(reason, {{absl::StrCat("model '", name, "': "), ""}});
    }
    absl::Status written = WriteFailureList(args.update_expected_failures, reasons, 120);
    if (!written.ok()) {
      std::cerr << "conformance_runner: " << written.message() << "\n";
      return 2;
    }
    std::cout << "wrote " << failures.size() << " expected failures to " << args.update_expected_failures << "\n";
    return 0;
  }
  if (args.expected_failures.empty()) return failures.empty() && below.empty() ? 0 : 1;

  const ListDiff diff = DiffWithList(passed, expected);
  if (args.filter.empty()) {
    std::vector<std::string> missing;
    for (const auto& [name, reason] : expected) {
      if (passed.count(name) == 0) missing.push_back(name);
    }
    if (!missing.empty()) {
      PrintGroup("note: listed expected failures that were not run (excluded or not generated)", missing, {});
    }
  }
  if (diff.unexpected_failures.empty() && diff.stale_entries.empty()) {
    std::cout << "conformance: results match " << args.expected_failures << " (" << failures.size()
              << " expected failures)\n";
    if (!below.empty()) std::cout << "conformance: cases are missing (above)\n";
    return below.empty() ? 0 : 1;
  }
  if (!diff.unexpected_failures.empty()) {
    PrintGroup("UNEXPECTED FAILURES: failing cases not in the expected-failures list", diff.unexpected_failures,
               failures);
  }
  if (!diff.stale_entries.empty()) {
    PrintGroup("STALE ENTRIES: listed cases that now pass; remove them from the list (it only shrinks)",
               diff.stale_entries, expected);
  }
  std::cout << "conformance: results do not match " << args.expected_failures << "\n";
  return 1;
}

}  // namespace
}  // namespace onyx::conformance

int main(int argc, char** argv) { return onyx::conformance::Main(argc, argv); }
