// Subcommands of the `onyx` CLI. Each takes the arguments after its name and
// returns the process exit code; errors print one line to stderr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace onyx::cli {

int RunCommand(const std::vector<std::string>& args);
int InspectCommand(const std::vector<std::string>& args);
int BenchCommand(const std::vector<std::string>& args);
// grpc.health.v1 Check against onyxd; exit codes in kHealthHelp.
int HealthCommand(const std::vector<std::string>& args);

extern const char kRunHelp[];
extern const char kInspectHelp[];
extern const char kBenchHelp[];
extern const char kHealthHelp[];

// Splits "a,b" into {"a", "b"}.
std::vector<std::string> SplitList(const std::string& text);

// The value of integer flag `flag`: the whole of `text` in decimal, within
// [min, max]. InvalidArgument naming the flag, the range and `text` otherwise.
absl::StatusOr<int64_t> ParseIntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max);

}  // namespace onyx::cli
