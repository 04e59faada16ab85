#include "server/config/command_line.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

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
  for (const Case& c : {
           Case{{"--port", "1"}, "unknown flag '--port'"},
           Case{{"--verbose=1"}, "unknown flag '--verbose'"},
           Case{{"models"}, "unexpected argument 'models'"},
           Case{{"--grpc-address"}, "--grpc-address needs a value"},
           Case{{"--log-level", "info", "--log-level", "warn"}, "more than once"},
           Case{{"--log-level", "loud"}, "received 'loud'"},
           Case{{"--grpc-address", "nohost"}, "--grpc-address"},
           Case{{"--model-repository="}, "non-empty path"},
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

TEST(CommandLineTest, MissingConfigFileIsAnError) {
  absl::StatusOr<CommandLine> flags = Parse({"--config", "/nonexistent/onyxd.yaml"});
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(ResolveServerConfig(*flags).ok());
}

}  // namespace
}  // namespace onyx::server
