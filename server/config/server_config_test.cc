#include "server/config/server_config.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ServerConfigTest, Defaults) {
  ServerConfig config;
  EXPECT_EQ(config.grpc_address, "127.0.0.1:8001");
  EXPECT_EQ(config.metrics_address, "127.0.0.1:8002");
  EXPECT_EQ(config.model_repository, "");
  EXPECT_EQ(config.log_level, "info");
  EXPECT_EQ(config.load_mode, LoadMode::kAll);
  EXPECT_EQ(config.max_message_bytes, 64 * 1024 * 1024);
  EXPECT_EQ(config.max_elements_per_input, int64_t{1} << 28);
  EXPECT_EQ(config.max_inflight_bytes, 0);
  EXPECT_EQ(config.max_stream_buffer_bytes, 64 * 1024 * 1024);
  EXPECT_EQ(config.log_format, LogFormat::kText);
  EXPECT_EQ(config.request_log_sample_rate, 0.0);
  EXPECT_FALSE(config.tls.enabled());
  EXPECT_FALSE(config.auth.enabled());
  EXPECT_TRUE(config.auth.control_rpcs_enabled);
  EXPECT_EQ(config.shutdown.linger_seconds, 0);
  EXPECT_EQ(config.shutdown.drain_timeout_seconds, 30);
  EXPECT_EQ(config.transport.max_concurrent_streams, 256);
  EXPECT_EQ(config.transport.max_metadata_bytes, 16384);
  EXPECT_EQ(config.transport.handshake_timeout_seconds, 10);
  EXPECT_EQ(config.transport.max_connection_idle_seconds, 600);
  EXPECT_EQ(config.transport.max_connection_age_seconds, 0);
  EXPECT_EQ(config.transport.max_connection_age_grace_seconds, 30);
  EXPECT_EQ(config.transport.min_ping_interval_seconds, 10);
  EXPECT_EQ(config.transport.max_ping_strikes, 2);
}

TEST(ServerConfigTest, ParsesEveryKey) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig(
      "grpc_address: 0.0.0.0:9001\n"
      "metrics_address: '[::1]:9002'\n"
      "model_repository: /models\n"
      "log_level: debug\n"
      "load_mode: explicit\n"
      "max_message_bytes: 1048576\n"
      "max_elements_per_input: 1000\n"
      "max_inflight_bytes: 1073741824\n"
      "max_stream_buffer_bytes: 1048576\n"
      "log_format: json\n"
      "request_log_sample_rate: 0.125\n"
      "tls:\n"
      "  cert_file: /tls/server.pem\n"
      "  key_file: /tls/server.key\n"
      "  client_ca_file: /tls/ca.pem\n"
      "inference_token_file: /auth/inference.tokens\n"
      "control_token_file: /auth/control.tokens\n"
      "control_rpcs: enabled\n"
      "shutdown:\n"
      "  linger_seconds: 5\n"
      "  drain_timeout_seconds: 45\n"
      "transport:\n"
      "  max_concurrent_streams: 64\n"
      "  max_metadata_bytes: 8192\n"
      "  handshake_timeout_seconds: 3\n"
      "  max_connection_idle_seconds: 0\n"
      "  max_connection_age_seconds: 900\n"
      "  max_connection_age_grace_seconds: 5\n"
      "  min_ping_interval_seconds: 1\n"
      "  max_ping_strikes: 0\n",
      "onyxd.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->grpc_address, "0.0.0.0:9001");
  EXPECT_EQ(config->metrics_address, "[::1]:9002");
  EXPECT_EQ(config->model_repository, "/models");
  EXPECT_EQ(config->log_level, "debug");
  EXPECT_EQ(config->load_mode, LoadMode::kExplicit);
  EXPECT_EQ(config->max_message_bytes, 1048576);
  EXPECT_EQ(config->max_elements_per_input, 1000);
  EXPECT_EQ(config->max_inflight_bytes, 1073741824);
  EXPECT_EQ(config->max_stream_buffer_bytes, 1048576);
  EXPECT_EQ(config->log_format, LogFormat::kJson);
  EXPECT_EQ(config->request_log_sample_rate, 0.125);
  EXPECT_EQ(config->tls.cert_file, "/tls/server.pem");
  EXPECT_EQ(config->tls.key_file, "/tls/server.key");
  EXPECT_EQ(config->tls.client_ca_file, "/tls/ca.pem");
  EXPECT_EQ(config->auth.inference_token_file, "/auth/inference.tokens");
  EXPECT_EQ(config->auth.control_token_file, "/auth/control.tokens");
  EXPECT_TRUE(config->auth.control_rpcs_enabled);
  EXPECT_EQ(config->shutdown.linger_seconds, 5);
  EXPECT_EQ(config->shutdown.drain_timeout_seconds, 45);
  EXPECT_EQ(config->transport.max_concurrent_streams, 64);
  EXPECT_EQ(config->transport.max_metadata_bytes, 8192);
  EXPECT_EQ(config->transport.handshake_timeout_seconds, 3);
  EXPECT_EQ(config->transport.max_connection_idle_seconds, 0);
  EXPECT_EQ(config->transport.max_connection_age_seconds, 900);
  EXPECT_EQ(config->transport.max_connection_age_grace_seconds, 5);
  EXPECT_EQ(config->transport.min_ping_interval_seconds, 1);
  EXPECT_EQ(config->transport.max_ping_strikes, 0);
}

TEST(ServerConfigTest, AbsentKeysKeepDefaults) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig("log_level: warn\n", "onyxd.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->log_level, "warn");
  EXPECT_EQ(config->grpc_address, "127.0.0.1:8001");
}

TEST(ServerConfigTest, EmptyMetricsAddressDisablesMetrics) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig("metrics_address: ''\n", "onyxd.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics_address, "");
}

TEST(ServerConfigTest, BadValuesNameFileKeyExpectedAndReceived) {
  struct Case {
    const char* yaml;
    const char* key;
    const char* received;
  };
  for (const Case& c : {
           Case{"grpc_address: localhost\n", "'grpc_address'", "'localhost'"},
           Case{"grpc_address: host:70000\n", "'grpc_address'", "'host:70000'"},
           Case{"metrics_address: ':'\n", "'metrics_address'", "':'"},
           Case{"log_level: verbose\n", "'log_level'", "'verbose'"},
           Case{"load_mode: lazy\n", "'load_mode'", "'lazy'"},
           Case{"max_message_bytes: 10\n", "'max_message_bytes'", "'10'"},
           Case{"model_repository: [a, b]\n", "'model_repository'", "a list"},
           Case{"max_elements_per_input: 0\n", "'max_elements_per_input'", "'0'"},
           Case{"max_elements_per_input: 2199023255553\n", "'max_elements_per_input'",
                "'2199023255553'"},
           Case{"log_format: xml\n", "'log_format'", "'xml'"},
           Case{"request_log_sample_rate: 1.5\n", "'request_log_sample_rate'", "'1.5'"},
           Case{"request_log_sample_rate: -0.1\n", "'request_log_sample_rate'", "'-0.1'"},
           Case{"request_log_sample_rate: nan\n", "'request_log_sample_rate'", "'nan'"},
           Case{"request_log_sample_rate: [1]\n", "'request_log_sample_rate'", "a list"},
           Case{"tls: on\n", "'tls'", "'on'"},
           Case{"tls: {cert_file: [a]}\n", "'tls.cert_file'", "a list"},
           Case{"tls: {cert_file: a.pem}\n", "'tls.key_file'", "nothing"},
           Case{"tls: {key_file: a.key}\n", "'tls.cert_file'", "nothing"},
           Case{"tls: {client_ca_file: ca.pem}\n", "'tls.client_ca_file'", "neither"},
           Case{"max_inflight_bytes: -1\n", "'max_inflight_bytes'", "'-1'"},
           Case{"max_inflight_bytes: 1125899906842625\n", "'max_inflight_bytes'",
                "'1125899906842625'"},
           Case{"max_stream_buffer_bytes: 0\n", "'max_stream_buffer_bytes'", "'0'"},
           Case{"inference_token_file: [a]\n", "'inference_token_file'", "a list"},
           Case{"control_token_file: ''\n", "'control_token_file'", "''"},
           Case{"control_rpcs: off\n", "'control_rpcs'", "'off'"},
           Case{"control_rpcs: disabled\ncontrol_token_file: /c\n", "'control_token_file'", "'/c'"},
           Case{"shutdown: 5\n", "'shutdown'", "'5'"},
           Case{"shutdown: {linger_seconds: -1}\n", "'shutdown.linger_seconds'", "'-1'"},
           Case{"shutdown: {drain_timeout_seconds: 3601}\n", "'shutdown.drain_timeout_seconds'",
                "'3601'"},
           Case{"transport: 5\n", "'transport'", "'5'"},
           Case{"transport: {max_concurrent_streams: 0}\n", "'transport.max_concurrent_streams'",
                "'0'"},
           Case{"transport: {max_metadata_bytes: 100}\n", "'transport.max_metadata_bytes'",
                "'100'"},
           Case{"transport: {handshake_timeout_seconds: 0}\n",
                "'transport.handshake_timeout_seconds'", "'0'"},
           Case{"transport: {max_connection_age_seconds: 2147484}\n",
                "'transport.max_connection_age_seconds'", "'2147484'"},
           Case{"transport: {max_ping_strikes: -1}\n", "'transport.max_ping_strikes'", "'-1'"},
       }) {
    absl::StatusOr<ServerConfig> config = ParseServerConfig(c.yaml, "onyxd.yaml");
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(config.status().message(),
                AllOf(HasSubstr("onyxd.yaml"), HasSubstr(c.key), HasSubstr("expected"),
                      HasSubstr(absl::StrCat("received ", c.received))))
        << c.yaml;
  }
}

TEST(ServerConfigTest, UnknownKeyIsAnError) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig("grpc_port: 8001\n", "onyxd.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              AllOf(HasSubstr("onyxd.yaml"), HasSubstr("unknown key 'grpc_port'")));
}

TEST(ServerConfigTest, UnknownNestedKeysAreErrors) {
  for (const char* yaml :
       {"tls: {cert: a.pem}\n", "shutdown: {linger: 5}\n", "transport: {max_streams: 5}\n"}) {
    absl::StatusOr<ServerConfig> config = ParseServerConfig(yaml, "onyxd.yaml");
    ASSERT_FALSE(config.ok()) << yaml;
    EXPECT_THAT(config.status().message(), AllOf(HasSubstr("onyxd.yaml"), HasSubstr("unknown key")))
        << yaml;
  }
  absl::StatusOr<ServerConfig> tls = ParseServerConfig("tls: {cert: a.pem}\n", "onyxd.yaml");
  EXPECT_THAT(tls.status().message(), HasSubstr("tls.cert"));
}

TEST(ServerConfigTest, ReadsTlsMaterialAndNamesBadFiles) {
  const std::string dir = ::testing::TempDir();
  const std::string cert = dir + "/server_config_test_cert.pem";
  const std::string key = dir + "/server_config_test_key.pem";
  const std::string junk = dir + "/server_config_test_junk.pem";
  std::ofstream(cert) << "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  std::ofstream(key) << "-----BEGIN PRIVATE KEY-----\nBBBB\n-----END PRIVATE KEY-----\n";
  std::ofstream(junk) << "not a certificate";

  TlsConfig tls{cert, key, ""};
  absl::StatusOr<TlsMaterial> material = ReadTlsMaterial(tls);
  ASSERT_TRUE(material.ok()) << material.status();
  EXPECT_EQ(material->cert_pem, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  EXPECT_EQ(material->key_pem, "-----BEGIN PRIVATE KEY-----\nBBBB\n-----END PRIVATE KEY-----\n");
  EXPECT_EQ(material->client_ca_pem, "");

  tls.client_ca_file = dir + "/absent/ca.pem";
  absl::StatusOr<TlsMaterial> missing = ReadTlsMaterial(tls);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(),
              AllOf(HasSubstr("tls.client_ca_file"), HasSubstr(tls.client_ca_file),
                    HasSubstr("expected a readable PEM file")));

  tls = TlsConfig{junk, key, ""};
  absl::StatusOr<TlsMaterial> not_pem = ReadTlsMaterial(tls);
  ASSERT_FALSE(not_pem.ok());
  EXPECT_THAT(not_pem.status().message(),
              AllOf(HasSubstr("tls.cert_file"), HasSubstr(junk), HasSubstr("-----BEGIN"),
                    HasSubstr("received 17 bytes")));
  for (const std::string& path : {cert, key, junk}) std::remove(path.c_str());
}

TEST(ServerConfigTest, MissingFileIsNotFound) {
  absl::StatusOr<ServerConfig> config =
      LoadServerConfigFile(::testing::TempDir() + "/absent/onyxd.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
}

TEST(ServerConfigTest, AddressValidation) {
  EXPECT_TRUE(ValidateAddress("x", "127.0.0.1:0").ok());
  EXPECT_TRUE(ValidateAddress("x", "[::]:8001").ok());
  EXPECT_TRUE(ValidateAddress("x", "example.com:65535").ok());
  EXPECT_FALSE(ValidateAddress("x", ":8001").ok());
  EXPECT_FALSE(ValidateAddress("x", "host:").ok());
  EXPECT_FALSE(ValidateAddress("x", "host:65536").ok());
  EXPECT_FALSE(ValidateAddress("x", "[::1:80").ok());
}

TEST(ServerConfigTest, DuplicateKeysAreRefusedNamingFileKeyAndBothLines) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig(
      "log_level: info\ngrpc_address: \"127.0.0.1:1\"\nlog_level: bogus\n", "onyxd.yaml");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "onyxd.yaml: duplicate key 'log_level' at line 3 (first given at line 1); give each "
            "key once");
  config = ParseServerConfig("shutdown:\n  linger_seconds: 1\n  linger_seconds: 1\n", "s.yaml");
  EXPECT_EQ(config.status().message(),
            "s.yaml: duplicate key 'shutdown.linger_seconds' at line 3 (first given at line 2); "
            "give each key once");
  config =
      ParseServerConfig("tls: {cert_file: a.pem, key_file: a.key, cert_file: b.pem}\n", "t.yaml");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("t.yaml: duplicate key 'tls.cert_file' at line 1 (first given at line 1)"));
  // Equal values repeated are still a mistake in the file.
  EXPECT_FALSE(ParseServerConfig("load_mode: all\nload_mode: all\n", "x.yaml").ok());
}

}  // namespace
}  // namespace onyx::server

namespace onyx::server {
namespace {

TEST(ServerConfigTest, AliasesAndDeepNestingAreRefusedBeforeAnyWalk) {
  // Ten levels of ten aliases each: 10^10 nodes to any recursive walk.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    bomb += "]\n";
  }
  absl::StatusOr<ServerConfig> config = ParseServerConfig(bomb + "log_level: *j\n", "bomb.yaml");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "bomb.yaml: line 2, column 8: aliases (*name) are not accepted in configuration; write "
            "the value out");
  const std::string deep = "log_level: " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  config = ParseServerConfig(deep, "deep.yaml");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("deep.yaml: line 1, column 75: lists and mappings nested more "
                        "than 64 deep"));
  // 64 levels with the top mapping are fine as YAML (the key then has the wrong type).
  config = ParseServerConfig("log_level: " + std::string(63, '[') + std::string(63, ']') + "\n",
                             "ok.yaml");
  EXPECT_THAT(config.status().message(), HasSubstr("key 'log_level'"));
}

}  // namespace
}  // namespace onyx::server
