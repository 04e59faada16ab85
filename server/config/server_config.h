// ServerConfig: process-wide settings of onyxd.
//
//   ASSIGN_OR_RETURN(ServerConfig config, LoadServerConfigFile("/etc/onyx/onyxd.yaml"));
//   RETURN_IF_ERROR(ApplyCommandLine(command_line, &config));   // flags win
//
// The YAML file has the keys of the struct below, all optional:
//   grpc_address: "0.0.0.0:8001"
//   metrics_address: "0.0.0.0:8002"
//   model_repository: /models
//   log_level: info            # trace | debug | info | warn | error
//   load_mode: all             # all | explicit
//   max_message_bytes: 67108864
// Unknown keys and bad values are INVALID_ARGUMENT naming the file, the key, what
// was expected and what was found.
// Plain data: thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onyx::server {

// all: every model in the repository loads at start. explicit: models load only
// through RepositoryModelLoad.
enum class LoadMode { kAll, kExplicit };

struct ServerConfig {
  std::string grpc_address = "127.0.0.1:8001";
  // Prometheus /metrics listener; empty disables it.
  std::string metrics_address = "127.0.0.1:8002";
  // Empty: serve the demo repository next to the executable.
  std::string model_repository;
  std::string log_level = "info";
  LoadMode load_mode = LoadMode::kAll;
  // gRPC receive and send limit per message. Clients keep their own limit
  // (4 MiB by default in gRPC) for responses.
  int64_t max_message_bytes = int64_t{64} << 20;
};

// "all" | "explicit".
absl::StatusOr<LoadMode> ParseLoadMode(absl::string_view text);
absl::string_view LoadModeName(LoadMode mode);

// OK for trace | debug | info | warn | error; INVALID_ARGUMENT otherwise.
absl::Status ValidateLogLevel(absl::string_view level);

// OK for "host:port" / "[v6]:port" with a port in [0, 65535]; INVALID_ARGUMENT
// naming `what` ("grpc_address") otherwise.
absl::Status ValidateAddress(absl::string_view what, absl::string_view address);

// Parses YAML text; `source` names the file in error messages. Keys absent from
// the text keep the defaults above.
absl::StatusOr<ServerConfig> ParseServerConfig(absl::string_view text, absl::string_view source);

// Reads and parses `path`. NOT_FOUND when the file does not exist.
absl::StatusOr<ServerConfig> LoadServerConfigFile(const std::string& path);

}  // namespace onyx::server
