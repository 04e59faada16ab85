#include "server/config/environment.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/command_line.h"

namespace onyx::server {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A fixed environment instead of the process's.
EnvironmentLookup Fake(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

ServerConfig Resolve(std::vector<const char*> args, const EnvironmentLookup& env) {
  absl::StatusOr<CommandLine> flags = ParseCommandLine(absl::MakeConstSpan(args));
  EXPECT_TRUE(flags.ok()) << flags.status();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(*flags, env);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ServerConfig{};
}

TEST(EnvironmentTest, UnsetVariablesKeepTheBuiltInDefaults) {
  ServerConfig config = Resolve({}, Fake({}));
  EXPECT_EQ(config.grpc_address, "127.0.0.1:8001");
  EXPECT_EQ(config.metrics_address, "127.0.0.1:8002");
}

TEST(EnvironmentTest, VariablesReplaceTheDefaults) {
  ServerConfig config = Resolve(
      {}, Fake({{"ONYX_GRPC_ADDRESS", "0.0.0.0:9001"}, {"ONYX_METRICS_ADDRESS", "[::]:9002"}}));
  EXPECT_EQ(config.grpc_address, "0.0.0.0:9001");
  EXPECT_EQ(config.metrics_address, "[::]:9002");
  // An empty metrics address disables the listener, as the flag's '' does.
  EXPECT_EQ(Resolve({}, Fake({{"ONYX_METRICS_ADDRESS", ""}})).metrics_address, "");
}

TEST(EnvironmentTest, FlagsWinOverVariables) {
  ServerConfig config = Resolve(
      {"--grpc-address", "127.0.0.1:7001"},
      Fake({{"ONYX_GRPC_ADDRESS", "0.0.0.0:9001"}, {"ONYX_METRICS_ADDRESS", "0.0.0.0:9002"}}));
  EXPECT_EQ(config.grpc_address, "127.0.0.1:7001");   // the flag
  EXPECT_EQ(config.metrics_address, "0.0.0.0:9002");  // the variable
}

TEST(EnvironmentTest, ConfigFileWinsOverVariables) {
  const std::string path = ::testing::TempDir() + "/environment_test.yaml";
  {
    std::ofstream out(path);
    out << "grpc_address: 0.0.0.0:7001\n";
  }
  ServerConfig config = Resolve(
      {"--config", path.c_str()},
      Fake({{"ONYX_GRPC_ADDRESS", "0.0.0.0:9001"}, {"ONYX_METRICS_ADDRESS", "0.0.0.0:9002"}}));
  EXPECT_EQ(config.grpc_address, "0.0.0.0:7001");     // set by the file
  EXPECT_EQ(config.metrics_address, "0.0.0.0:9002");  // not in the file: the variable
  std::remove(path.c_str());
}

TEST(EnvironmentTest, BadValuesNameTheVariable) {
  for (const char* name : {"ONYX_GRPC_ADDRESS", "ONYX_METRICS_ADDRESS"}) {
    absl::StatusOr<ServerConfig> config = DefaultsFromEnvironment(Fake({{name, "8001"}}));
    ASSERT_FALSE(config.ok()) << name;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(config.status().message(),
                AllOf(HasSubstr(name), HasSubstr("expected HOST:PORT"), HasSubstr("'8001'")));
  }
  // The gRPC listener cannot be disabled.
  EXPECT_FALSE(DefaultsFromEnvironment(Fake({{"ONYX_GRPC_ADDRESS", ""}})).ok());
}

TEST(EnvironmentTest, UsageListsTheVariables) {
  EXPECT_THAT(CommandLineUsage(),
              AllOf(HasSubstr("ONYX_GRPC_ADDRESS"), HasSubstr("ONYX_METRICS_ADDRESS")));
}

}  // namespace
}  // namespace onyx::server
