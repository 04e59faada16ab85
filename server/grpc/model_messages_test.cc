#include "server/grpc/model_messages.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

using Parameters = google::protobuf::Map<std::string, inference::ModelRepositoryParameter>;

TEST(ParseLoadParametersTest, ReadsConfigAndFiles) {
  Parameters parameters;
  parameters["config"].set_string_param(R"({"max_batch_size": 2})");
  parameters["file:3/model.onnx"].set_bytes_param(std::string("\x08\x00onnx", 6));
  absl::StatusOr<LoadOverrides> overrides = ParseLoadParameters(parameters);
  ASSERT_TRUE(overrides.ok()) << overrides.status();
  EXPECT_EQ(overrides->config, R"({"max_batch_size": 2})");
  EXPECT_THAT(overrides->files, ElementsAre(Pair("3/model.onnx", std::string("\x08\x00onnx", 6))));
}

TEST(ParseLoadParametersTest, NoParametersOverrideNothing) {
  absl::StatusOr<LoadOverrides> overrides = ParseLoadParameters(Parameters());
  ASSERT_TRUE(overrides.ok());
  EXPECT_FALSE(overrides->config.has_value());
  EXPECT_TRUE(overrides->files.empty());
}

TEST(ParseLoadParametersTest, UnknownNamesAreNamed) {
  Parameters parameters;
  parameters["config"].set_string_param("{}");
  parameters["zeta"].set_bool_param(true);
  parameters["alpha"].set_int64_param(1);
  absl::StatusOr<LoadOverrides> overrides = ParseLoadParameters(parameters);
  EXPECT_EQ(overrides.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(overrides.status().message(), HasSubstr("'alpha', 'zeta'"));
  EXPECT_THAT(overrides.status().message(), HasSubstr("expected 'config' or 'file:"));
}

TEST(ParseLoadParametersTest, WrongParameterTypesAreRefused) {
  Parameters config_as_bytes;
  config_as_bytes["config"].set_bytes_param("{}");
  EXPECT_THAT(ParseLoadParameters(config_as_bytes).status().message(),
              HasSubstr("'config': expected string_param"));
  Parameters file_as_string;
  file_as_string["file:1/model.onnx"].set_string_param("x");
  EXPECT_THAT(ParseLoadParameters(file_as_string).status().message(),
              HasSubstr("'file:1/model.onnx': expected bytes_param"));
}

}  // namespace
}  // namespace onyx::server
