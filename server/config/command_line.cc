#include "server/config/command_line.h"

#include <cstdint>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "onyx/status_macros.h"

namespace onyx::server {
namespace {

struct FlagSpec {
  absl::string_view name;
  std::optional<std::string> CommandLine::*field;
};

constexpr FlagSpec kValueFlags[] = {
    {"--config", &CommandLine::config_path},
    {"--model-repository", &CommandLine::model_repository},
    {"--grpc-address", &CommandLine::grpc_address},
    {"--metrics-address", &CommandLine::metrics_address},
    {"--log-level", &CommandLine::log_level},
    {"--log-format", &CommandLine::log_format},
    {"--request-log-sample-rate", &CommandLine::request_log_sample_rate},
    {"--max-elements-per-input", &CommandLine::max_elements_per_input},
    {"--tls-cert-file", &CommandLine::tls_cert_file},
    {"--tls-key-file", &CommandLine::tls_key_file},
    {"--tls-client-ca-file", &CommandLine::tls_client_ca_file},
    {"--inference-token-file", &CommandLine::inference_token_file},
    {"--control-token-file", &CommandLine::control_token_file},
    {"--control-rpcs", &CommandLine::control_rpcs},
    {"--shutdown-linger-seconds", &CommandLine::shutdown_linger_seconds},
    {"--drain-timeout-seconds", &CommandLine::drain_timeout_seconds},
    {"--load-mode", &CommandLine::load_mode},
    {"--max-message-bytes", &CommandLine::max_message_bytes},
    {"--max-inflight-bytes", &CommandLine::max_inflight_bytes},
    {"--max-stream-buffer-bytes", &CommandLine::max_stream_buffer_bytes},
};

// An integer flag in [min, max].
absl::StatusOr<int64_t> IntFlag(absl::string_view name, const std::string& text, int64_t min,
                                int64_t max) {
  int64_t value = 0;
  if (absl::SimpleAtoi(text, &value) && value >= min && value <= max) return value;
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": expected an integer in [", min, ", ", max, "], received '", text, "'"));
}

absl::Status ValidateFlags(const CommandLine& flags) {
  if (flags.grpc_address) RETURN_IF_ERROR(ValidateAddress("--grpc-address", *flags.grpc_address));
  if (flags.metrics_address && !flags.metrics_address->empty()) {
    RETURN_IF_ERROR(ValidateAddress("--metrics-address", *flags.metrics_address));
  }
  if (flags.log_level && !ValidateLogLevel(*flags.log_level).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level: expected one of trace, debug, info, warn, error, received '",
                     *flags.log_level, "'"));
  }
  for (const auto* path : {&flags.config_path, &flags.model_repository}) {
    if (path->has_value() && (*path)->empty()) {
      return absl::InvalidArgumentError("--config and --model-repository need a non-empty path");
    }
  }
  if (flags.log_format) RETURN_IF_ERROR(ParseLogFormat("--log-format", *flags.log_format).status());
  if (flags.request_log_sample_rate) {
    RETURN_IF_ERROR(
        ParseSampleRate("--request-log-sample-rate", *flags.request_log_sample_rate).status());
  }
  if (flags.max_elements_per_input) {
    RETURN_IF_ERROR(IntFlag("--max-elements-per-input", *flags.max_elements_per_input, 1,
                            kMaxElementsPerInputLimit)
                        .status());
  }
  if (flags.shutdown_linger_seconds) {
    RETURN_IF_ERROR(
        IntFlag("--shutdown-linger-seconds", *flags.shutdown_linger_seconds, 0, kMaxShutdownSeconds)
            .status());
  }
  if (flags.drain_timeout_seconds) {
    RETURN_IF_ERROR(
        IntFlag("--drain-timeout-seconds", *flags.drain_timeout_seconds, 0, kMaxShutdownSeconds)
            .status());
  }
  if (flags.load_mode && !ParseLoadMode(*flags.load_mode).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--load-mode: expected 'all' or 'explicit', received '", *flags.load_mode, "'"));
  }
  if (flags.max_message_bytes) {
    RETURN_IF_ERROR(IntFlag("--max-message-bytes", *flags.max_message_bytes, kMinMaxMessageBytes,
                            kMaxMaxMessageBytes)
                        .status());
  }
  if (flags.max_inflight_bytes) {
    RETURN_IF_ERROR(
        IntFlag("--max-inflight-bytes", *flags.max_inflight_bytes, 0, kMaxInflightBytesLimit)
            .status());
  }
  if (flags.max_stream_buffer_bytes) {
    RETURN_IF_ERROR(IntFlag("--max-stream-buffer-bytes", *flags.max_stream_buffer_bytes, 1,
                            kMaxStreamBufferBytesLimit)
                        .status());
  }
  if (flags.control_rpcs)
    RETURN_IF_ERROR(ParseControlRpcs("--control-rpcs", *flags.control_rpcs).status());
  // An empty TLS or token path is a typo, not a way to switch a feature off.
  for (auto [name, value] : {std::pair{"--tls-cert-file", &flags.tls_cert_file},
                             std::pair{"--tls-key-file", &flags.tls_key_file},
                             std::pair{"--tls-client-ca-file", &flags.tls_client_ca_file},
                             std::pair{"--inference-token-file", &flags.inference_token_file},
                             std::pair{"--control-token-file", &flags.control_token_file}}) {
    if (value->has_value() && (*value)->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " needs a non-empty path"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(absl::Span<const char* const> args) {
  CommandLine flags;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
      continue;
    }
    absl::string_view name = arg;
    std::optional<absl::string_view> value;
    if (const size_t eq = arg.find('=');
        absl::StartsWith(arg, "--") && eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& candidate : kValueFlags) {
      if (candidate.name == name) spec = &candidate;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StartsWith(arg, "-")
              ? absl::StrCat("unknown flag '", name, "' (see --help)")
              : absl::StrCat("unexpected argument '", arg, "' (see --help)"));
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag ", name, " needs a value"));
      }
      value = args[++i];
    }
    std::optional<std::string>& field = flags.*(spec->field);
    if (field) {
      return absl::InvalidArgumentError(absl::StrCat("flag ", name, " given more than once"));
    }
    field = std::string(*value);
  }
  RETURN_IF_ERROR(ValidateFlags(flags));
  return flags;
}

std::string CommandLineUsage() {
  const ServerConfig defaults;
  return absl::StrCat(
      "usage: onyxd [flags]\n"
      "\n"
      "Serves ONNX models over the KServe v2 / Triton gRPC protocol.\n"
      "\n"
      "  --config FILE              YAML server configuration; flags override it\n"
      "  --model-repository DIR     <DIR>/<model>/<version>/model.onnx (default: the demo\n"
      "                             repository next to the executable)\n"
      "  --grpc-address HOST:PORT   gRPC listener (default ",
      defaults.grpc_address,
      ")\n"
      "  --metrics-address HOST:PORT  Prometheus /metrics listener; '' disables it\n"
      "                             (default ",
      defaults.metrics_address,
      ")\n"
      "  --log-level LEVEL          trace | debug | info | warn | error (default ",
      defaults.log_level,
      ")\n"
      "  --log-format FORMAT        text | json (one JSON object per line) (default text)\n"
      "  --request-log-sample-rate R  share of ModelInfer calls logged, 0..1 (default 0)\n"
      "  --max-elements-per-input N  largest element count of one request input (default ",
      defaults.max_elements_per_input,
      ")\n"
      "  --tls-cert-file FILE       PEM certificate chain: serve gRPC over TLS\n"
      "  --tls-key-file FILE        PEM private key of --tls-cert-file\n"
      "  --tls-client-ca-file FILE  PEM CA bundle: require client certificates it signed\n"
      "  --inference-token-file FILE  bearer tokens (one per line) that open inference\n"
      "                             and metadata RPCs (default: those RPCs are open)\n"
      "  --control-token-file FILE  bearer tokens that open control RPCs (load/unload,\n"
      "                             shared memory, admin)\n"
      "  --control-rpcs MODE        enabled | disabled: refuse every control RPC\n"
      "                             (default enabled)\n"
      "  --shutdown-linger-seconds S  after SIGTERM, keep serving S seconds while not ready\n"
      "                             (default ",
      defaults.shutdown.linger_seconds,
      ")\n"
      "  --drain-timeout-seconds S  then wait up to S seconds for accepted calls (default ",
      defaults.shutdown.drain_timeout_seconds,
      ")\n"
      "  --load-mode MODE           all: load every model at start; explicit: only\n"
      "                             through RepositoryModelLoad (default ",
      LoadModeName(defaults.load_mode),
      ")\n"
      "  --max-message-bytes N      largest gRPC message received or sent, in [",
      kMinMaxMessageBytes, ", ", kMaxMaxMessageBytes,
      "]\n"
      "                             (default ",
      defaults.max_message_bytes,
      ")\n"
      "  --max-inflight-bytes N     request bytes admitted over all models and not yet\n"
      "                             answered; beyond it RESOURCE_EXHAUSTED, in [0, ",
      kMaxInflightBytesLimit,
      "]\n"
      "                             (default ",
      defaults.max_inflight_bytes,
      " = no cap)\n"
      "  --max-stream-buffer-bytes N  per ModelStreamInfer stream, reply bytes waiting\n"
      "                             for the client, in [1, ",
      kMaxStreamBufferBytesLimit, "] (default ", defaults.max_stream_buffer_bytes,
      ")\n"
      "  --help                     this text\n"
      "\n",
      EnvironmentUsage());
}

void ApplyCommandLine(const CommandLine& flags, ServerConfig* config) {
  if (flags.model_repository) config->model_repository = *flags.model_repository;
  if (flags.grpc_address) config->grpc_address = *flags.grpc_address;
  if (flags.metrics_address) config->metrics_address = *flags.metrics_address;
  if (flags.log_level) config->log_level = *flags.log_level;
  if (flags.log_format) config->log_format = *ParseLogFormat("", *flags.log_format);
  if (flags.request_log_sample_rate) {
    config->request_log_sample_rate = *ParseSampleRate("", *flags.request_log_sample_rate);
  }
  // Validated by ParseCommandLine: SimpleAtoi succeeds and the value is in range.
  auto to_int = [](const std::string& text) {
    int64_t value = 0;
    (void)absl::SimpleAtoi(text, &value);
    return value;
  };
  if (flags.max_elements_per_input) {
    config->max_elements_per_input = to_int(*flags.max_elements_per_input);
  }
  if (flags.shutdown_linger_seconds) {
    config->shutdown.linger_seconds = to_int(*flags.shutdown_linger_seconds);
  }
  if (flags.drain_timeout_seconds) {
    config->shutdown.drain_timeout_seconds = to_int(*flags.drain_timeout_seconds);
  }
  if (flags.load_mode) config->load_mode = *ParseLoadMode(*flags.load_mode);
  if (flags.max_message_bytes) config->max_message_bytes = to_int(*flags.max_message_bytes);
  if (flags.max_inflight_bytes) config->max_inflight_bytes = to_int(*flags.max_inflight_bytes);
  if (flags.max_stream_buffer_bytes) {
    config->max_stream_buffer_bytes = to_int(*flags.max_stream_buffer_bytes);
  }
  if (flags.tls_cert_file) config->tls.cert_file = *flags.tls_cert_file;
  if (flags.tls_key_file) config->tls.key_file = *flags.tls_key_file;
  if (flags.tls_client_ca_file) config->tls.client_ca_file = *flags.tls_client_ca_file;
  if (flags.inference_token_file) config->auth.inference_token_file = *flags.inference_token_file;
  if (flags.control_token_file) config->auth.control_token_file = *flags.control_token_file;
  if (flags.control_rpcs) {
    config->auth.control_rpcs_enabled = *ParseControlRpcs("", *flags.control_rpcs);
  }
}

absl::StatusOr<ServerConfig> ResolveServerConfig(const CommandLine& flags,
                                                 const EnvironmentLookup& lookup) {
  ASSIGN_OR_RETURN(ServerConfig config, DefaultsFromEnvironment(lookup));
  if (flags.config_path) {
    ASSIGN_OR_RETURN(config, LoadServerConfigFile(*flags.config_path, config));
  }
  ApplyCommandLine(flags, &config);
  RETURN_IF_ERROR(ValidateTlsConfig(
      config.tls, flags.config_path ? absl::StrCat(*flags.config_path, " and the --tls-* flags")
                                    : std::string("the --tls-* flags")));
  RETURN_IF_ERROR(ValidateAuthConfig(
      config.auth, flags.config_path
                       ? absl::StrCat(*flags.config_path, " and the --control-* flags")
                       : std::string("the --control-* flags")));
  return config;
}

}  // namespace onyx::server
