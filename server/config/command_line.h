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
#include "server/config/environment.h"
#include "server/config/server_config.h"

namespace onyx::server {

struct CommandLine {
  bool help = false;
  std::optional<std::string> config_path;              // --config
  std::optional<std::string> model_repository;         // --model-repository
  std::optional<std::string> grpc_address;             // --grpc-address
  std::optional<std::string> metrics_address;          // --metrics-address
  std::optional<std::string> log_level;                // --log-level
  std::optional<std::string> log_format;               // --log-format
  std::optional<std::string> request_log_sample_rate;  // --request-log-sample-rate
  std::optional<std::string> max_elements_per_input;   // --max-elements-per-input
  std::optional<std::string> tls_cert_file;            // --tls-cert-file
  std::optional<std::string> tls_key_file;             // --tls-key-file
  std::optional<std::string> tls_client_ca_file;       // --tls-client-ca-file
  std::optional<std::string> inference_token_file;     // --inference-token-file
  std::optional<std::string> control_token_file;       // --control-token-file
  std::optional<std::string> control_rpcs;             // --control-rpcs
  std::optional<std::string> shutdown_linger_seconds;  // --shutdown-linger-seconds
  std::optional<std::string> drain_timeout_seconds;    // --drain-timeout-seconds
  std::optional<std::string> load_mode;                // --load-mode
  std::optional<std::string> max_message_bytes;        // --max-message-bytes
  std::optional<std::string> max_inflight_bytes;       // --max-inflight-bytes
  std::optional<std::string> max_stream_buffer_bytes;  // --max-stream-buffer-bytes
};

// Parses the arguments after argv[0]. Values are checked here, with the file's
// rules (addresses, log level and format, load mode, numbers and their
// ranges), so that a bad flag fails before any file is read.
absl::StatusOr<CommandLine> ParseCommandLine(absl::Span<const char* const> args);

// The --help text (flags, then the environment variables).
std::string CommandLineUsage();

// Overrides the fields of `config` that `flags` sets. `flags` must come from
// ParseCommandLine (its values are already validated).
void ApplyCommandLine(const CommandLine& flags, ServerConfig* config);

// Defaults, replaced by the environment's (environment.h, read through
// `lookup`), then the --config file when given, then the flags. A bad variable
// is INVALID_ARGUMENT naming it. The merged TLS settings must be complete
// (ValidateTlsConfig) and the merged auth settings consistent
// (ValidateAuthConfig); the PEM and token files are read later.
absl::StatusOr<ServerConfig> ResolveServerConfig(
    const CommandLine& flags, const EnvironmentLookup& lookup = ProcessEnvironment);

}  // namespace onyx::server
