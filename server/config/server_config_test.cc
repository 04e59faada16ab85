#include "server/config/server_config.h"

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
}

TEST(ServerConfigTest, ParsesEveryKey) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig(
      "grpc_address: 0.0.0.0:9001\n"
      "metrics_address: '[::1]:9002'\n"
      "model_repository: /models\n"
      "log_level: debug\n"
      "load_mode: explicit\n"
      "max_message_bytes: 1048576\n",
      "onyxd.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->grpc_address, "0.0.0.0:9001");
  EXPECT_EQ(config->metrics_address, "[::1]:9002");
  EXPECT_EQ(config->model_repository, "/models");
  EXPECT_EQ(config->log_level, "debug");
  EXPECT_EQ(config->load_mode, LoadMode::kExplicit);
  EXPECT_EQ(config->max_message_bytes, 1048576);
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

}  // namespace
}  // namespace onyx::server
