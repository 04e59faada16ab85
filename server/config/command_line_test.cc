#include "server/config/command_line.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

absl::StatusOr<CommandLine> Parse(std::vector<const char*> args) {
  return ParseCommandLine(absl::MakeConstSpan(args));
}

TEST(CommandLineTest, ParsesSpaceAndEqualsForms) {
  absl::StatusOr<CommandLine> flags =
      Parse({"--model-repository", "/models", "--grpc-address=0.0.0.0:9001", "--metrics-address",
             "127.0.0.1:0", "--log-level=debug", "--config", "a.yaml"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->model_repository, "/models");
  EXPECT_EQ(flags->grpc_address, "0.0.0.0:9001");
  EXPECT_EQ(flags->metrics_address, "127.0.0.1:0");
  EXPECT_EQ(flags->log_level, "debug");
  EXPECT_EQ(flags->config_path, "a.yaml");
  EXPECT_FALSE(flags->help);
}

TEST(CommandLineTest, NoArgumentsSetsNothing) {
  absl::StatusOr<CommandLine> flags = Parse({});
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(flags->model_repository.has_value());
  EXPECT_FALSE(flags->config_path.has_value());
}

TEST(CommandLineTest, Help) {
  absl::StatusOr<CommandLine> flags = Parse({"--help"});
  ASSERT_TRUE(flags.ok());
  EXPECT_TRUE(flags->help);
  EXPECT_THAT(CommandLineUsage(), HasSubstr("--model-repository"));
}

TEST(CommandLineTest, RejectsBadArguments) {
  struct Case {
    std::vector<const char*> args;
    const char* message;
  };
  for (
      const Case& c : {
          Case{{"--port", "1"}, "unknown flag '--port'"},
          Case{{"--verbose=1"}, "unknown flag '--verbose'"},
          Case{{"models"}, "unexpected argument 'models'"},
          Case{{"--grpc-address"}, "--grpc-address needs a value"},
          Case{{"--log-level", "info", "--log-level", "warn"}, "more than once"},
          Case{{"--log-level", "loud"}, "received 'loud'"},
          Case{{"--grpc-address", "nohost"}, "--grpc-address"},
          Case{{"--model-repository="}, "non-empty path"},
          Case{{"--log-format", "xml"}, "--log-format: expected 'text' or 'json', received 'xml'"},
          Case{{"--request-log-sample-rate", "2"}, "expected a number in [0, 1], received '2'"},
          Case{{"--request-log-sample-rate=abc"}, "received 'abc'"},
          Case{{"--max-elements-per-input", "0"},
               "--max-elements-per-input: expected an integer in [1, 1099511627776], received '0'"},
          Case{{"--max-elements-per-input", "1e6"}, "received '1e6'"},
          Case{{"--shutdown-linger-seconds", "-1"},
               "--shutdown-linger-seconds: expected an integer in [0, 3600], received '-1'"},
          Case{{"--drain-timeout-seconds", "soon"}, "--drain-timeout-seconds"},
          Case{{"--tls-cert-file="}, "--tls-cert-file needs a non-empty path"},
          Case{{"--load-mode", "lazy"},
               "--load-mode: expected 'all' or 'explicit', received 'lazy'"},
          Case{{"--load-mode="}, "--load-mode: expected 'all' or 'explicit', received ''"},
          Case{{"--max-message-bytes", "4095"},
               "--max-message-bytes: expected an integer in [4096, 2147483647], received '4095'"},
          Case{{"--max-message-bytes=2147483648"}, "received '2147483648'"},
          Case{{"--max-message-bytes", "64MiB"}, "received '64MiB'"},
          Case{{"--max-inflight-bytes", "-1"},
               "--max-inflight-bytes: expected an integer in [0, 1125899906842624], received '-1'"},
          Case{{"--max-inflight-bytes=1125899906842625"}, "received '1125899906842625'"},
          Case{
              {"--max-stream-buffer-bytes", "0"},
              "--max-stream-buffer-bytes: expected an integer in [1, 1099511627776], received '0'"},
          Case{{"--load-mode", "all", "--load-mode", "all"},
               "flag --load-mode given more than once"},
      }) {
    absl::StatusOr<CommandLine> flags = Parse(c.args);
    ASSERT_FALSE(flags.ok()) << c.message;
    EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(flags.status().message(), HasSubstr(c.message));
  }
}

TEST(CommandLineTest, FlagsOverrideTheConfigFile) {
  const std::string path = ::testing::TempDir() + "/command_line_test.yaml";
  {
    std::ofstream out(path);
    out << "grpc_address: 0.0.0.0:7001\nlog_level: error\nmodel_repository: /from/file\n";
  }
  absl::StatusOr<CommandLine> flags = Parse({"--config", path.c_str(), "--log-level", "trace"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->grpc_address, "0.0.0.0:7001");  // from the file
  EXPECT_EQ(config->log_level, "trace");            // flag wins
  EXPECT_EQ(config->model_repository, "/from/file");
  EXPECT_EQ(config->metrics_address, "127.0.0.1:8002");  // default
  std::remove(path.c_str());
}

TEST(CommandLineTest, LoadModeAndMessageLimitFlagsOverrideTheFile) {
  const std::string path = ::testing::TempDir() + "/command_line_test_limits.yaml";
  {
    std::ofstream out(path);
    out << "load_mode: all\nmax_message_bytes: 8192\n";
  }
  absl::StatusOr<CommandLine> flags = Parse(
      {"--config", path.c_str(), "--load-mode", "explicit", "--max-message-bytes=2147483647"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->load_mode, LoadMode::kExplicit);
  EXPECT_EQ(config->max_message_bytes, 2147483647);
  // Without the flags the file's values stand.
  flags = Parse({"--config", path.c_str()});
  config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->load_mode, LoadMode::kAll);
  EXPECT_EQ(config->max_message_bytes, 8192);
  std::remove(path.c_str());
  // Without a file they override the defaults.
  flags = Parse({"--load-mode=all", "--max-message-bytes", "4096"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  config = ResolveServerConfig(*flags);
  EXPECT_EQ(config->load_mode, LoadMode::kAll);
  EXPECT_EQ(config->max_message_bytes, 4096);
  EXPECT_THAT(CommandLineUsage(),
              AllOf(HasSubstr("--load-mode MODE"), HasSubstr("(default all)"),
                    HasSubstr("--max-message-bytes N"), HasSubstr("[4096, 2147483647]"),
                    HasSubstr("(default 67108864)")));
}

TEST(CommandLineTest, ByteBudgetFlagsOverrideTheFile) {
  const std::string path = ::testing::TempDir() + "/command_line_test_budgets.yaml";
  {
    std::ofstream out(path);
    out << "max_inflight_bytes: 1000\nmax_stream_buffer_bytes: 2000\n";
  }
  absl::StatusOr<CommandLine> flags =
      Parse({"--config", path.c_str(), "--max-inflight-bytes", "0", "--max-stream-buffer-bytes=1"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_inflight_bytes, 0);
  EXPECT_EQ(config->max_stream_buffer_bytes, 1);
  flags = Parse({"--config", path.c_str()});
  config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_inflight_bytes, 1000);
  EXPECT_EQ(config->max_stream_buffer_bytes, 2000);
  std::remove(path.c_str());
  EXPECT_THAT(CommandLineUsage(),
              AllOf(HasSubstr("--max-inflight-bytes N"), HasSubstr("(default 0 = no cap)"),
                    HasSubstr("--max-stream-buffer-bytes N"), HasSubstr("[1, 1099511627776]")));
}

TEST(CommandLineTest, EdgeFlagsSetTheirKeys) {
  absl::StatusOr<CommandLine> flags =
      Parse({"--log-format", "json", "--request-log-sample-rate=0.5", "--max-elements-per-input",
             "4096", "--tls-cert-file", "s.pem", "--tls-key-file", "s.key", "--tls-client-ca-file",
             "ca.pem", "--shutdown-linger-seconds", "5", "--drain-timeout-seconds=12"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->log_format, LogFormat::kJson);
  EXPECT_EQ(config->request_log_sample_rate, 0.5);
  EXPECT_EQ(config->max_elements_per_input, 4096);
  EXPECT_EQ(config->tls.cert_file, "s.pem");
  EXPECT_EQ(config->tls.key_file, "s.key");
  EXPECT_EQ(config->tls.client_ca_file, "ca.pem");
  EXPECT_EQ(config->shutdown.linger_seconds, 5);
  EXPECT_EQ(config->shutdown.drain_timeout_seconds, 12);
}

TEST(CommandLineTest, TlsFlagsOverrideTheFileAndMustBeComplete) {
  const std::string path = ::testing::TempDir() + "/command_line_tls_test.yaml";
  {
    std::ofstream out(path);
    out << "tls: {cert_file: file.pem, key_file: file.key}\nshutdown: {linger_seconds: 3}\n";
  }
  absl::StatusOr<CommandLine> flags = Parse(
      {"--config", path.c_str(), "--tls-cert-file", "flag.pem", "--drain-timeout-seconds", "7"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->tls.cert_file, "flag.pem");  // flag wins
  EXPECT_EQ(config->tls.key_file, "file.key");   // from the file
  EXPECT_EQ(config->shutdown.linger_seconds, 3);
  EXPECT_EQ(config->shutdown.drain_timeout_seconds, 7);
  std::remove(path.c_str());

  absl::StatusOr<CommandLine> half = Parse({"--tls-key-file", "k.pem"});
  ASSERT_TRUE(half.ok());
  absl::StatusOr<ServerConfig> refused = ResolveServerConfig(*half);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("--tls-* flags"), HasSubstr("tls.cert_file"), HasSubstr("expected")));
}

TEST(CommandLineTest, AuthFlagsOverrideTheFile) {
  const std::string path = ::testing::TempDir() + "/command_line_auth_test.yaml";
  {
    std::ofstream out(path);
    out << "inference_token_file: /file/inference\ncontrol_token_file: /file/control\n";
  }
  absl::StatusOr<CommandLine> flags =
      Parse({"--config", path.c_str(), "--inference-token-file=/flag/inference"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(*flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->auth.inference_token_file, "/flag/inference");
  EXPECT_EQ(config->auth.control_token_file, "/file/control");
  EXPECT_TRUE(config->auth.control_rpcs_enabled);

  // Disabling control RPCs while the file gives them a token set contradicts it.
  absl::StatusOr<CommandLine> disabled =
      Parse({"--config", path.c_str(), "--control-rpcs", "disabled"});
  ASSERT_TRUE(disabled.ok()) << disabled.status();
  absl::StatusOr<ServerConfig> refused = ResolveServerConfig(*disabled);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("control_token_file"), HasSubstr("control_rpcs"),
                    HasSubstr("/file/control")));
  std::remove(path.c_str());

  absl::StatusOr<CommandLine> off = Parse({"--control-rpcs", "disabled"});
  ASSERT_TRUE(off.ok()) << off.status();
  absl::StatusOr<ServerConfig> off_config = ResolveServerConfig(*off);
  ASSERT_TRUE(off_config.ok()) << off_config.status();
  EXPECT_FALSE(off_config->auth.control_rpcs_enabled);
  EXPECT_TRUE(off_config->auth.enabled());

  for (std::vector<const char*> bad : {std::vector<const char*>{"--control-rpcs", "off"},
                                       std::vector<const char*>{"--inference-token-file", ""},
                                       std::vector<const char*>{"--control-token-file="}}) {
    absl::StatusOr<CommandLine> parsed = Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad[0];
    const std::string name(bad[0]);
    EXPECT_THAT(parsed.status().message(), HasSubstr(name.substr(0, name.find('='))));
  }
}

TEST(CommandLineTest, MissingConfigFileIsAnError) {
  absl::StatusOr<CommandLine> flags = Parse({"--config", "/nonexistent/onyxd.yaml"});
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(ResolveServerConfig(*flags).ok());
}

}  // namespace
}  // namespace onyx::server
