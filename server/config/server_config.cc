#include "server/config/server_config.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
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

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view what, absl::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": expected 'text' or 'json', received '", text, "'"));
}

absl::StatusOr<double> ParseSampleRate(absl::string_view what, absl::string_view text) {
  double rate = 0;
  // SimpleAtod accepts "nan" and "inf"; the range check below refuses both.
  if (absl::SimpleAtod(text, &rate) && rate >= 0 && rate <= 1) return rate;
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": expected a number in [0, 1], received '", text, "'"));
}

absl::StatusOr<bool> ParseControlRpcs(absl::string_view what, absl::string_view text) {
  if (text == "enabled") return true;
  if (text == "disabled") return false;
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": expected 'enabled' or 'disabled', received '", text, "'"));
}

absl::Status ValidateAuthConfig(const AuthConfig& auth, absl::string_view source) {
  if (!auth.control_rpcs_enabled && !auth.control_token_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": key 'control_token_file': expected no control token file when 'control_rpcs' is "
        "'disabled' (no token can open a disabled RPC), received '",
        auth.control_token_file, "'"));
  }
  return absl::OkStatus();
}

absl::Status ValidateTlsConfig(const TlsConfig& tls, absl::string_view source) {
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    const bool has_cert = !tls.cert_file.empty();
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": key 'tls.", has_cert ? "key_file" : "cert_file",
                     "': expected it next to 'tls.", has_cert ? "cert_file" : "key_file",
                     "' (a certificate and its private key go together), received nothing"));
  }
  if (!tls.client_ca_file.empty() && tls.cert_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": key 'tls.client_ca_file': expected 'tls.cert_file' and 'tls.key_file' as well "
        "(client certificates are verified only over TLS), received neither"));
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::string> ReadPem(absl::string_view key, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls.", key, ": cannot read '", path, "' (expected a readable PEM file)"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string pem = text.str();
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(absl::StrCat("tls.", key, ": '", path,
                                                   "' is not PEM (expected a '-----BEGIN ' block, ",
                                                   "received ", pem.size(), " bytes without one)"));
  }
  return pem;
}

}  // namespace

absl::StatusOr<TlsMaterial> ReadTlsMaterial(const TlsConfig& tls) {
  TlsMaterial material;
  ASSIGN_OR_RETURN(material.cert_pem, ReadPem("cert_file", tls.cert_file));
  ASSIGN_OR_RETURN(material.key_pem, ReadPem("key_file", tls.key_file));
  if (!tls.client_ca_file.empty()) {
    ASSIGN_OR_RETURN(material.client_ca_pem, ReadPem("client_ca_file", tls.client_ca_file));
  }
  return material;
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

absl::Status ParseTls(const YAML::Node& node, absl::string_view source, TlsConfig* tls) {
  RETURN_IF_ERROR(yaml_util::ExpectMap(node, source, "tls"));
  RETURN_IF_ERROR(
      yaml_util::CheckKeys(node, {"cert_file", "key_file", "client_ca_file"}, source, "tls."));
  for (auto [key, field] :
       {std::pair{"cert_file", &tls->cert_file}, std::pair{"key_file", &tls->key_file},
        std::pair{"client_ca_file", &tls->client_ca_file}}) {
    if (node[key]) {
      ASSIGN_OR_RETURN(*field, yaml_util::GetString(node[key], source, absl::StrCat("tls.", key)));
    }
  }
  return ValidateTlsConfig(*tls, source);
}

absl::Status ParseShutdown(const YAML::Node& node, absl::string_view source,
                           ShutdownConfig* shutdown) {
  RETURN_IF_ERROR(yaml_util::ExpectMap(node, source, "shutdown"));
  RETURN_IF_ERROR(
      yaml_util::CheckKeys(node, {"linger_seconds", "drain_timeout_seconds"}, source, "shutdown."));
  if (node["linger_seconds"]) {
    ASSIGN_OR_RETURN(shutdown->linger_seconds,
                     yaml_util::GetInt(node["linger_seconds"], source, "shutdown.linger_seconds", 0,
                                       kMaxShutdownSeconds));
  }
  if (node["drain_timeout_seconds"]) {
    ASSIGN_OR_RETURN(shutdown->drain_timeout_seconds,
                     yaml_util::GetInt(node["drain_timeout_seconds"], source,
                                       "shutdown.drain_timeout_seconds", 0, kMaxShutdownSeconds));
  }
  return absl::OkStatus();
}

absl::Status ParseTransport(const YAML::Node& node, absl::string_view source,
                            TransportConfig* transport) {
  RETURN_IF_ERROR(yaml_util::ExpectMap(node, source, "transport"));
  struct Key {
    const char* name;
    int64_t* field;
    int64_t min;
    int64_t max;
  };
  const Key keys[] = {
      {"max_concurrent_streams", &transport->max_concurrent_streams, 1, kMaxTransportCount},
      {"max_metadata_bytes", &transport->max_metadata_bytes, 1024, kMaxTransportCount},
      {"handshake_timeout_seconds", &transport->handshake_timeout_seconds, 1, kMaxTransportSeconds},
      {"max_connection_idle_seconds", &transport->max_connection_idle_seconds, 0,
       kMaxTransportSeconds},
      {"max_connection_age_seconds", &transport->max_connection_age_seconds, 0,
       kMaxTransportSeconds},
      {"max_connection_age_grace_seconds", &transport->max_connection_age_grace_seconds, 0,
       kMaxTransportSeconds},
      {"min_ping_interval_seconds", &transport->min_ping_interval_seconds, 0, kMaxTransportSeconds},
      {"max_ping_strikes", &transport->max_ping_strikes, 0, kMaxTransportCount},
  };
  RETURN_IF_ERROR(yaml_util::CheckKeys(
      node,
      {"max_concurrent_streams", "max_metadata_bytes", "handshake_timeout_seconds",
       "max_connection_idle_seconds", "max_connection_age_seconds",
       "max_connection_age_grace_seconds", "min_ping_interval_seconds", "max_ping_strikes"},
      source, "transport."));
  for (const Key& key : keys) {
    if (!node[key.name]) continue;
    ASSIGN_OR_RETURN(*key.field, yaml_util::GetInt(node[key.name], source,
                                                   absl::StrCat("transport.", key.name), key.min,
                                                   key.max));
  }
  return absl::OkStatus();
}

absl::StatusOr<ServerConfig> ParseServerConfigUnsafe(absl::string_view text,
                                                     absl::string_view source,
                                                     const ServerConfig& defaults) {
  ASSIGN_OR_RETURN(const YAML::Node root, yaml_util::ParseDocument(text, source));
  RETURN_IF_ERROR(yaml_util::CheckKeys(
      root,
      {"grpc_address", "metrics_address", "model_repository", "log_level", "log_format",
       "request_log_sample_rate", "load_mode", "max_message_bytes", "max_elements_per_input",
       "max_inflight_bytes", "max_stream_buffer_bytes", "tls", "inference_token_file",
       "control_token_file", "control_rpcs", "shutdown", "transport"},
      source, ""));
  ServerConfig config = defaults;
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
  if (root["log_format"]) {
    ASSIGN_OR_RETURN(std::string format,
                     yaml_util::GetString(root["log_format"], source, "log_format"));
    auto parsed = ParseLogFormat("log_format", format);
    if (!parsed.ok()) {
      return yaml_util::BadValue(source, "log_format", "'text' or 'json'",
                                 yaml_util::Describe(root["log_format"]));
    }
    config.log_format = *parsed;
  }
  if (root["request_log_sample_rate"]) {
    const YAML::Node node = root["request_log_sample_rate"];
    auto rate = node.IsScalar() ? ParseSampleRate("request_log_sample_rate", node.Scalar())
                                : absl::InvalidArgumentError("not a scalar");
    if (!rate.ok()) {
      return yaml_util::BadValue(source, "request_log_sample_rate", "a number in [0, 1]",
                                 yaml_util::Describe(node));
    }
    config.request_log_sample_rate = *rate;
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
    ASSIGN_OR_RETURN(config.max_message_bytes,
                     yaml_util::GetInt(root["max_message_bytes"], source, "max_message_bytes",
                                       kMinMaxMessageBytes, kMaxMaxMessageBytes));
  }
  if (root["max_elements_per_input"]) {
    ASSIGN_OR_RETURN(config.max_elements_per_input,
                     yaml_util::GetInt(root["max_elements_per_input"], source,
                                       "max_elements_per_input", 1, kMaxElementsPerInputLimit));
  }
  if (root["max_inflight_bytes"]) {
    ASSIGN_OR_RETURN(config.max_inflight_bytes,
                     yaml_util::GetInt(root["max_inflight_bytes"], source, "max_inflight_bytes", 0,
                                       kMaxInflightBytesLimit));
  }
  if (root["max_stream_buffer_bytes"]) {
    ASSIGN_OR_RETURN(config.max_stream_buffer_bytes,
                     yaml_util::GetInt(root["max_stream_buffer_bytes"], source,
                                       "max_stream_buffer_bytes", 1, kMaxStreamBufferBytesLimit));
  }
  if (root["tls"]) RETURN_IF_ERROR(ParseTls(root["tls"], source, &config.tls));
  for (auto [key, field] : {std::pair{"inference_token_file", &config.auth.inference_token_file},
                            std::pair{"control_token_file", &config.auth.control_token_file}}) {
    if (root[key]) {
      ASSIGN_OR_RETURN(*field, yaml_util::GetString(root[key], source, key));
    }
  }
  if (root["control_rpcs"]) {
    const YAML::Node node = root["control_rpcs"];
    auto enabled = node.IsScalar() ? ParseControlRpcs("control_rpcs", node.Scalar())
                                   : absl::InvalidArgumentError("not a scalar");
    if (!enabled.ok()) {
      return yaml_util::BadValue(source, "control_rpcs", "'enabled' or 'disabled'",
                                 yaml_util::Describe(node));
    }
    config.auth.control_rpcs_enabled = *enabled;
  }
  RETURN_IF_ERROR(ValidateAuthConfig(config.auth, source));
  if (root["shutdown"]) RETURN_IF_ERROR(ParseShutdown(root["shutdown"], source, &config.shutdown));
  if (root["transport"]) {
    RETURN_IF_ERROR(ParseTransport(root["transport"], source, &config.transport));
  }
  return config;
}

}  // namespace

absl::StatusOr<ServerConfig> ParseServerConfig(absl::string_view text, absl::string_view source,
                                               const ServerConfig& defaults) {
  try {
    return ParseServerConfigUnsafe(text, source, defaults);
  } catch (const std::exception& e) {  // yaml-cpp throws from node accessors
    return absl::InvalidArgumentError(absl::StrCat(source, ": invalid configuration: ", e.what()));
  }
}

absl::StatusOr<ServerConfig> LoadServerConfigFile(const std::string& path,
                                                  const ServerConfig& defaults) {
  ASSIGN_OR_RETURN(std::string text, yaml_util::ReadFile(path));
  return ParseServerConfig(text, path, defaults);
}

}  // namespace onyx::server
