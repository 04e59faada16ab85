// Command-line flags of onyxd.
//
//   ASSIGN_OR_RETURN(CommandLine flags, ParseCommandLine({argv + 1, argv + argc}));
//   if (flags.help) { puts(CommandLineUsage().c_str()); return 0; }
//   ASSIGN_OR_RETURN(ServerConfig config, ResolveServerConfig(flags));
//
// Flags take "--name VALUE" or "--name=VALUE". An unknown flag, a missing value, a
// positional argument or a repeated flag is INVALID_ARGUMENT (onyxd exits 2).
// Plain data and pure functions: thread-safe.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/config/server_config.h"

namespace onyx::server {

struct CommandLine {
  bool help = false;
  std::optional<std::string> config_path;       // --config
  std::optional<std::string> model_repository;  // --model-repository
  std::optional<std::string> grpc_address;      // --grpc-address
  std::optional<std::string> metrics_address;   // --metrics-address
  std::optional<std::string> log_level;         // --log-level
};

// Parses the arguments after argv[0]. Values are checked here (addresses, log
// level) so that a bad flag fails before any file is read.
absl::StatusOr<CommandLine> ParseCommandLine(absl::Span<const char* const> args);

// The --help text.
std::string CommandLineUsage();

// Overrides the fields of `config` that `flags` sets.
void ApplyCommandLine(const CommandLine& flags, ServerConfig* config);

// Defaults, then the --config file when given, then the flags.
absl::StatusOr<ServerConfig> ResolveServerConfig(const CommandLine& flags);

}  // namespace onyx::server
