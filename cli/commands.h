// Subcommands of the `onyx` CLI. Each takes the arguments after its name and
// returns the process exit code; errors print one line to stderr.
#pragma once

#include <string>
#include <vector>

namespace onyx::cli {

int RunCommand(const std::vector<std::string>& args);
int InspectCommand(const std::vector<std::string>& args);
int BenchCommand(const std::vector<std::string>& args);

extern const char kRunHelp[];
extern const char kInspectHelp[];
extern const char kBenchHelp[];

// Splits "a,b" into {"a", "b"}.
std::vector<std::string> SplitList(const std::string& text);

}  // namespace onyx::cli
