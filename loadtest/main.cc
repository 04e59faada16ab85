// onyx-load: the load generator for onyxd (loadtest/README.md; `onyx-load
// --help` lists every flag and the exit codes).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "loadtest/compare.h"
#include "loadtest/options.h"
#include "loadtest/report.h"
#include "loadtest/runner.h"
#include "loadtest/verdict.h"

#ifndef ONYX_VERSION
#define ONYX_VERSION "dev"
#endif

int main(int argc, char** argv) {
  using namespace onyx::load;
  // Debian's abseil checks every mutex acquisition for lock-order cycles (a
  // debug aid); on the request path that costs a few percent of throughput.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "compare") return CompareMain({args.begin() + 1, args.end()});
  absl::StatusOr<Options> options = ParseFlags(args);
  if (!options.ok()) {
    std::fprintf(stderr, "onyx-load: %s\n", std::string(options.status().message()).c_str());
    return kExitUsage;
  }
  if (options->help) {
    std::fputs(UsageText().c_str(), stdout);
    return kExitOk;
  }
  if (options->version) {
    std::printf("onyx-load %s\n", ONYX_VERSION);
    return kExitOk;
  }
  absl::StatusOr<std::unique_ptr<Runner>> runner = Runner::Create(*options);
  if (!runner.ok()) {
    std::fprintf(stderr, "onyx-load: %s\n", std::string(runner.status().message()).c_str());
    return absl::IsUnavailable(runner.status()) ? kExitUnreachable : kExitUsage;
  }
  RunResult result = (*runner)->Run();
  std::string command_line = "onyx-load";
  for (const std::string& a : args) command_line += " " + a;
  result.command_line = command_line;
  runner->reset();  // unregisters shared memory, closes streams and the trace
  std::cout << TextReport(result) << std::flush;
  const struct {
    const std::string& path;
    const char* flag;
    std::string (*render)(const RunResult&);
  } files[] = {{options->json_path, "--json", JsonReport},
               {options->csv_path, "--csv", CsvReport},
               {options->html_path, "--html", HtmlReport}};
  for (const auto& f : files) {
    if (f.path.empty()) continue;
    if (absl::Status s = WriteTextFile(f.flag, f.path, f.render(result)); !s.ok()) {
      std::fprintf(stderr, "onyx-load: %s\n", std::string(s.message()).c_str());
      return kExitUsage;
    }
  }
  return result.exit_code;
}
