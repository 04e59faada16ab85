#include "server/config/command_line.h"

#include "absl/strings/match.h"
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
};

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
      "  --help                     this text\n");
}

void ApplyCommandLine(const CommandLine& flags, ServerConfig* config) {
  if (flags.model_repository) config->model_repository = *flags.model_repository;
  if (flags.grpc_address) config->grpc_address = *flags.grpc_address;
  if (flags.metrics_address) config->metrics_address = *flags.metrics_address;
  if (flags.log_level) config->log_level = *flags.log_level;
}

absl::StatusOr<ServerConfig> ResolveServerConfig(const CommandLine& flags) {
  ServerConfig config;
  if (flags.config_path) {
    ASSIGN_OR_RETURN(config, LoadServerConfigFile(*flags.config_path));
  }
  ApplyCommandLine(flags, &config);
  return config;
}

}  // namespace onyx::server
