// onyx: run, inspect or benchmark an ONNX model with the onyx engine, outside the server.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

const char kHelp[] =
    "usage: onyx <command> [flags]\n"
    "\n"
    "commands:\n"
    "  run       run a model on ONNX test-data files (input_N.pb -> output_N.pb)\n"
    "  inspect   print a model's inputs, outputs, op histogram and partition report\n"
    "  bench     time a model on random inputs; prints latency, session creation and peak RSS as JSON\n"
    "\n"
    "`onyx <command> --help` explains each command's flags.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kHelp, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return onyx::cli::RunCommand(args);
  if (command == "inspect") return onyx::cli::InspectCommand(args);
  if (command == "bench") return onyx::cli::BenchCommand(args);
  std::fprintf(stderr, "onyx: unknown command '%s' (expected run, inspect or bench)\n", command.c_str());
  return 2;
}
