#include "server/config/server_config.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "server/config/yaml_util.h"

namespace onyx::server {

absl::StatusOr<LoadMode> ParseLoadMode(absl::string_view text) {
  if (text == "all") return LoadMode::kAll;
  if (text == "explicit") return LoadMode::kExplicit;
  return absl::InvalidArgumentError(
      absl::StrCat("load_mode: expected 'all' or 'explicit', received '", text, "'"));
}

absl::string_view LoadModeName(LoadMode mode) {
  return mode == LoadMode::kAll ? "all" : "explicit";
}

absl::Status ValidateLogLevel(absl::string_view level) {
  for (absl::string_view known : {"trace", "debug", "info", "warn", "error"}) {
    if (level == known) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "log_level: expected one of trace, debug, info, warn, error, received '", level, "'"));
}

absl::Status ValidateAddress(absl::string_view what, absl::string_view address) {
  const size_t colon = address.rfind(':');
  bool ok = colon != absl::string_view::npos && colon > 0;
  if (ok) {
    absl::string_view host = address.substr(0, colon);
    if (host.front() == '[') ok = host.size() > 2 && host.back() == ']';
    uint32_t port = 0;
    ok = ok && absl::SimpleAtoi(address.substr(colon + 1), &port) && port <= 65535;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": expected HOST:PORT with a port in [0, 65535], received '", address, "'"));
}

namespace {

// Prefixes a validator's message with the file and key in the house format.
absl::Status InFile(absl::string_view source, absl::Status status) {
  if (status.ok()) return status;
  return absl::InvalidArgumentError(absl::StrCat(source, ": key ", status.message()));
}

absl::StatusOr<ServerConfig> ParseServerConfigUnsafe(absl::string_view text,
                                                     absl::string_view source) {
  ASSIGN_OR_RETURN(const YAML::Node root, yaml_util::ParseDocument(text, source));
  RETURN_IF_ERROR(yaml_util::CheckKeys(root,
                                       {"grpc_address", "metrics_address", "model_repository",
                                        "log_level", "load_mode", "max_message_bytes"},
                                       source, ""));
  ServerConfig config;
  if (root["grpc_address"]) {
    ASSIGN_OR_RETURN(config.grpc_address,
                     yaml_util::GetString(root["grpc_address"], source, "grpc_address"));
    RETURN_IF_ERROR(InFile(source, ValidateAddress("'grpc_address'", config.grpc_address)));
  }
  if (root["metrics_address"]) {
    // An explicit empty string disables the metrics listener.
    const YAML::Node node = root["metrics_address"];
    if (node.IsScalar() && node.Scalar().empty()) {
      config.metrics_address.clear();
    } else {
      ASSIGN_OR_RETURN(config.metrics_address,
                       yaml_util::GetString(node, source, "metrics_address"));
      RETURN_IF_ERROR(InFile(source, ValidateAddress("'metrics_address'", config.metrics_address)));
    }
  }
  if (root["model_repository"]) {
    ASSIGN_OR_RETURN(config.model_repository,
                     yaml_util::GetString(root["model_repository"], source, "model_repository"));
  }
  if (root["log_level"]) {
    ASSIGN_OR_RETURN(config.log_level,
                     yaml_util::GetString(root["log_level"], source, "log_level"));
    if (!ValidateLogLevel(config.log_level).ok()) {
      return yaml_util::BadValue(source, "log_level", "one of trace, debug, info, warn, error",
                                 yaml_util::Describe(root["log_level"]));
    }
  }
  if (root["load_mode"]) {
    ASSIGN_OR_RETURN(std::string mode,
                     yaml_util::GetString(root["load_mode"], source, "load_mode"));
    auto parsed = ParseLoadMode(mode);
    if (!parsed.ok()) {
      return yaml_util::BadValue(source, "load_mode", "'all' or 'explicit'",
                                 yaml_util::Describe(root["load_mode"]));
    }
    config.load_mode = *parsed;
  }
  if (root["max_message_bytes"]) {
    // gRPC takes an int; keep at least 4 KiB so error replies always fit.
    ASSIGN_OR_RETURN(config.max_message_bytes,
                     yaml_util::GetInt(root["max_message_bytes"], source, "max_message_bytes", 4096,
                                       int64_t{2147483647}));
  }
  return config;
}

}  // namespace

absl::StatusOr<ServerConfig> ParseServerConfig(absl::string_view text, absl::string_view source) {
  try {
    return ParseServerConfigUnsafe(text, source);
  } catch (const std::exception& e) {  // yaml-cpp throws from node accessors
    return absl::InvalidArgumentError(absl::StrCat(source, ": invalid configuration: ", e.what()));
  }
}

absl::StatusOr<ServerConfig> LoadServerConfigFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, yaml_util::ReadFile(path));
  return ParseServerConfig(text, path);
}

}  // namespace onyx::server
