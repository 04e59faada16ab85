// ServerConfig: process-wide settings of onyxd.
//
//   ASSIGN_OR_RETURN(ServerConfig config, LoadServerConfigFile("/etc/onyx/onyxd.yaml"));
//   ApplyCommandLine(command_line, &config);                    // flags win
//   ASSIGN_OR_RETURN(TlsMaterial pem, ReadTlsMaterial(config.tls));  // at startup
//
// The YAML file has the keys of the structs below, all optional:
//   grpc_address: "0.0.0.0:8001"
//   metrics_address: "0.0.0.0:8002"
//   model_repository: /models
//   log_level: info            # trace | debug | info | warn | error
//   log_format: text           # text | json
//   request_log_sample_rate: 0 # 0..1: share of ModelInfer calls logged
//   load_mode: all             # all | explicit
//   max_message_bytes: 67108864
//   max_elements_per_input: 268435456
//   max_inflight_bytes: 0            # request bytes admitted, not answered; 0 = no cap
//   max_stream_buffer_bytes: 67108864 # per ModelStreamInfer stream
//   tls: {cert_file: server.pem, key_file: server.key, client_ca_file: ca.pem}
//   inference_token_file: /etc/onyx/inference.tokens
//   control_token_file: /etc/onyx/control.tokens
//   control_rpcs: enabled      # enabled | disabled
//   shutdown: {linger_seconds: 0, drain_timeout_seconds: 30}
//   transport: {max_concurrent_streams: 256, max_metadata_bytes: 16384,
//               handshake_timeout_seconds: 10, max_connection_idle_seconds: 600,
//               max_connection_age_seconds: 0, max_connection_age_grace_seconds: 30,
//               min_ping_interval_seconds: 10, max_ping_strikes: 2}
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

// text: spdlog's human-readable lines. json: one JSON object per line.
enum class LogFormat { kText, kJson };

// TLS on the gRPC port. cert_file and key_file come together (PEM); with
// client_ca_file clients must present a certificate signed by that CA.
struct TlsConfig {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  bool enabled() const { return !cert_file.empty(); }
};

// The PEM contents of a TlsConfig's files.
struct TlsMaterial {
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;  // empty: clients are not asked for a certificate
};

// Bearer-token authentication (server/auth/authorizer.h has the policy). Off
// when both files are empty; control RPCs can be switched off on their own.
struct AuthConfig {
  std::string inference_token_file;
  std::string control_token_file;
  bool control_rpcs_enabled = true;
  bool enabled() const {
    return !inference_token_file.empty() || !control_token_file.empty() || !control_rpcs_enabled;
  }
};

// What SIGTERM/SIGINT does: readiness drops at once, inference is still served
// for linger_seconds (so load balancers stop routing), then new calls are
// refused and accepted ones get up to drain_timeout_seconds to finish.
struct ShutdownConfig {
  int64_t linger_seconds = 0;
  int64_t drain_timeout_seconds = 30;
};

// HTTP/2 limits of the gRPC port, applied through gRPC's own channel
// arguments (server/grpc/transport_limits.h). They bound what one connection
// can hold or cost; 0 means "never" for the idle and age limits.
struct TransportConfig {
  // Streams open at once on one connection; more are refused (REFUSED_STREAM).
  int64_t max_concurrent_streams = 256;
  // Request header list (metadata) size; a larger one fails its call with
  // RESOURCE_EXHAUSTED before the call reaches onyxd.
  int64_t max_metadata_bytes = 16384;
  // From accept to the client's HTTP/2 SETTINGS (TLS included): connections
  // that stay silent are closed.
  int64_t handshake_timeout_seconds = 10;
  // A connection with no open stream for this long gets GOAWAY.
  int64_t max_connection_idle_seconds = 600;
  // Every connection gets GOAWAY at this age (clients reconnect, so a load
  // balancer can spread them again), then the grace to finish its calls.
  int64_t max_connection_age_seconds = 0;
  int64_t max_connection_age_grace_seconds = 30;
  // Pings closer together than this are strikes (with or without calls);
  // one strike more than max_ping_strikes closes the connection with GOAWAY
  // ENHANCE_YOUR_CALM ("too_many_pings").
  int64_t min_ping_interval_seconds = 10;
  int64_t max_ping_strikes = 2;
};

// max_elements_per_input when neither the file nor a flag sets it; also the
// limit request parsing applies by default (ParseLimits).
inline constexpr int64_t kDefaultMaxElementsPerInput = int64_t{1} << 28;

struct ServerConfig {
  std::string grpc_address = "127.0.0.1:8001";
  // Prometheus /metrics listener; empty disables it.
  std::string metrics_address = "127.0.0.1:8002";
  // Empty: serve the demo repository next to the executable.
  std::string model_repository;
  std::string log_level = "info";
  LogFormat log_format = LogFormat::kText;
  // Share of ModelInfer calls that log one line when they finish; 0 = none.
  double request_log_sample_rate = 0;
  LoadMode load_mode = LoadMode::kAll;
  // gRPC receive and send limit per message. Clients keep their own limit
  // (4 MiB by default in gRPC) for responses.
  int64_t max_message_bytes = int64_t{64} << 20;
  // Largest element count of one request input, checked before any allocation.
  int64_t max_elements_per_input = kDefaultMaxElementsPerInput;
  // Request bytes (serialized, shared-memory inputs included) admitted over
  // all models and not yet answered; a request that would pass it is refused
  // with RESOURCE_EXHAUSTED before it is decoded. 0: no cap.
  int64_t max_inflight_bytes = 0;
  // Per ModelStreamInfer stream: reply bytes buffered for a client that does
  // not read them (grpc/stream_window.h).
  int64_t max_stream_buffer_bytes = int64_t{64} << 20;
  TlsConfig tls;
  AuthConfig auth;
  ShutdownConfig shutdown;
  TransportConfig transport;
};

// Accepted ranges, shared by the file and the flags.
inline constexpr int64_t kMaxElementsPerInputLimit = int64_t{1} << 40;
inline constexpr int64_t kMaxShutdownSeconds = 3600;
// gRPC takes int milliseconds and int counts.
inline constexpr int64_t kMaxTransportSeconds = 2147483647 / 1000;
inline constexpr int64_t kMaxTransportCount = 2147483647;
inline constexpr int64_t kMaxInflightBytesLimit = int64_t{1} << 50;
inline constexpr int64_t kMaxStreamBufferBytesLimit = int64_t{1} << 40;
// gRPC takes an int; at least 4 KiB so that error replies always fit.
inline constexpr int64_t kMinMaxMessageBytes = 4096;
inline constexpr int64_t kMaxMaxMessageBytes = 2147483647;

// "all" | "explicit".
absl::StatusOr<LoadMode> ParseLoadMode(absl::string_view text);
absl::string_view LoadModeName(LoadMode mode);

// "text" | "json"; INVALID_ARGUMENT naming `what` otherwise.
absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view what, absl::string_view text);

// OK for trace | debug | info | warn | error; INVALID_ARGUMENT otherwise.
absl::Status ValidateLogLevel(absl::string_view level);

// OK for "host:port" / "[v6]:port" with a port in [0, 65535]; INVALID_ARGUMENT
// naming `what` ("grpc_address") otherwise.
absl::Status ValidateAddress(absl::string_view what, absl::string_view address);

// A number in [0, 1] ("0.25", "1"); INVALID_ARGUMENT naming `what` otherwise.
absl::StatusOr<double> ParseSampleRate(absl::string_view what, absl::string_view text);

// cert_file and key_file both set or both empty; client_ca_file only with them.
// INVALID_ARGUMENT naming `source` and the keys otherwise.
absl::Status ValidateTlsConfig(const TlsConfig& tls, absl::string_view source);

// "enabled" | "disabled"; INVALID_ARGUMENT naming `what` otherwise.
absl::StatusOr<bool> ParseControlRpcs(absl::string_view what, absl::string_view text);

// control_rpcs disabled with a control_token_file is a contradiction.
// INVALID_ARGUMENT naming `source` and both keys.
absl::Status ValidateAuthConfig(const AuthConfig& auth, absl::string_view source);

// Reads the PEM files of an enabled `tls`. INVALID_ARGUMENT naming the key and
// the file when one cannot be read or holds no PEM block ("-----BEGIN").
absl::StatusOr<TlsMaterial> ReadTlsMaterial(const TlsConfig& tls);

// Parses YAML text; `source` names the file in error messages. Keys absent from
// the text keep their value in `defaults` (ServerConfig's own, or those the
// environment gives: environment.h).
absl::StatusOr<ServerConfig> ParseServerConfig(absl::string_view text, absl::string_view source,
                                               const ServerConfig& defaults = {});

// Reads and parses `path`. NOT_FOUND when the file does not exist.
absl::StatusOr<ServerConfig> LoadServerConfigFile(const std::string& path,
                                                  const ServerConfig& defaults = {});

}  // namespace onyx::server
