// onyx: run, inspect or benchmark an ONNX model with the onyx engine, outside the server;
// ask a running onyxd whether it is healthy.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "onyx/huge_page_malloc.h"

namespace {

const char kHelp[] =
    "usage: onyx <command> [flags]\n"
    "\n"
    "commands:\n"
    "  run       run a model on ONNX test-data files (input_N.pb -> output_N.pb)\n"
    "  inspect   print a model's inputs, outputs, op histogram and partition report\n"
    "  bench     time a model on random inputs; prints latency, session creation and peak RSS as JSON\n"
    "  health    ask a running onyxd (grpc.health.v1) whether it, or one model, is serving\n"
    "\n"
    "`onyx <command> --help` explains each command's flags.\n";

}  // namespace

int main(int argc, char** argv) {
  onyx::ReexecWithHugePageMalloc(argv, /*by_default=*/true);
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
  if (command == "health") return onyx::cli::HealthCommand(args);
  std::fprintf(stderr, "onyx: unknown command '%s' (expected run, inspect, bench or health)\n", command.c_str());
  return 2;
}
