#include "server/auth/authorizer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kInfer[] = "/inference.GRPCInferenceService/ModelInfer";
constexpr char kStream[] = "/inference.GRPCInferenceService/ModelStreamInfer";
constexpr char kLoad[] = "/inference.GRPCInferenceService/RepositoryModelLoad";
constexpr char kShmRegister[] = "/inference.GRPCInferenceService/SystemSharedMemoryRegister";
constexpr char kProfile[] = "/onyx.admin.v1.Admin/ProfileModel";
constexpr char kIndex[] = "/inference.GRPCInferenceService/RepositoryIndex";
constexpr char kLive[] = "/inference.GRPCInferenceService/ServerLive";
constexpr char kReady[] = "/inference.GRPCInferenceService/ServerReady";
constexpr char kHealth[] = "/grpc.health.v1.Health/Check";
constexpr char kWatch[] = "/grpc.health.v1.Health/Watch";

constexpr char kInferenceToken[] = "inference-Zq8v2LmR7tXc";
constexpr char kControlToken[] = "control-Hn3pW9sKd1Yb";

using Md = std::vector<std::pair<absl::string_view, absl::string_view>>;

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("authorizer_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    inference_file_ = Write("inference", std::string("# inference\n") + kInferenceToken + "\n");
    control_file_ = Write("control", std::string(kControlToken) + "\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    const fs::path tmp = dir_ / (name + ".tmp");
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
    }
    fs::rename(tmp, path);
    return path.string();
  }

  std::unique_ptr<Authorizer> Make(bool inference, bool control, bool control_enabled = true) {
    Authorizer::Options options;
    if (inference) options.inference_token_file = inference_file_;
    if (control) options.control_token_file = control_file_;
    options.control_rpcs_enabled = control_enabled;
    options.reload_interval = absl::InfiniteDuration();
    auto authorizer = Authorizer::Create(options);
    EXPECT_TRUE(authorizer.ok()) << authorizer.status();
    return authorizer.ok() ? std::move(*authorizer) : nullptr;
  }

  // The code of `path` called with `md`; also checks that no message carries a token.
  static absl::StatusCode Code(const Authorizer& auth, absl::string_view path, const Md& md) {
    const Authorizer::Decision decision = auth.Authorize(path, md);
    for (const auto& [key, value] : md) {
      // The secret part: what follows the scheme ("Bearer " is in the hint).
      const absl::string_view secret = absl::StripAsciiWhitespace(
          absl::StripPrefix(absl::StripAsciiWhitespace(value), "Bearer"));
      if (secret.empty()) continue;
      EXPECT_THAT(decision.status.message(), Not(HasSubstr(std::string(secret))))
          << "the message repeats the value of '" << key << "'";
    }
    EXPECT_THAT(decision.status.message(), Not(HasSubstr(kInferenceToken)));
    EXPECT_THAT(decision.status.message(), Not(HasSubstr(kControlToken)));
    return decision.status.code();
  }

  static Md Bearer(absl::string_view token) { return Md{{"authorization", Bearer_(token)}}; }
  static absl::string_view Bearer_(absl::string_view token) {
    static thread_local std::vector<std::string> keep;
    keep.push_back(std::string("Bearer ") + std::string(token));
    return keep.back();
  }

  fs::path dir_;
  std::string inference_file_;
  std::string control_file_;
};

TEST_F(AuthorizerTest, BothTokenSets) {
  auto auth = Make(true, true);
  ASSERT_NE(auth, nullptr);
  // Probes stay public, with or without (any) token.
  for (const char* path : {kLive, kReady, kHealth, kWatch}) {
    EXPECT_EQ(Code(*auth, path, {}), absl::StatusCode::kOk) << path;
    EXPECT_EQ(Code(*auth, path, Bearer("nonsense")), absl::StatusCode::kOk) << path;
  }
  // Inference RPCs: the inference token.
  for (const char* path : {kInfer, kStream}) {
    EXPECT_EQ(Code(*auth, path, {}), absl::StatusCode::kUnauthenticated) << path;
    EXPECT_EQ(Code(*auth, path, Bearer("wrong-token")), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(Code(*auth, path, Bearer(kInferenceToken)), absl::StatusCode::kOk) << path;
    EXPECT_EQ(Code(*auth, path, Bearer(kControlToken)), absl::StatusCode::kPermissionDenied);
  }
  // Control RPCs: the control token.
  for (const char* path : {kLoad, kShmRegister, kProfile}) {
    EXPECT_EQ(Code(*auth, path, {}), absl::StatusCode::kUnauthenticated) << path;
    EXPECT_EQ(Code(*auth, path, Bearer(kControlToken)), absl::StatusCode::kOk) << path;
    EXPECT_EQ(Code(*auth, path, Bearer(kInferenceToken)), absl::StatusCode::kPermissionDenied);
  }
  // Metadata RPCs: either token.
  EXPECT_EQ(Code(*auth, kIndex, {}), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(*auth, kIndex, Bearer(kInferenceToken)), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kIndex, Bearer(kControlToken)), absl::StatusCode::kOk);
  // A path no table names is control: never open by omission.
  EXPECT_EQ(Code(*auth, "/inference.GRPCInferenceService/NewRpc", Bearer(kInferenceToken)),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code(*auth, "/x.Y/Z", {}), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(*auth, "", {}), absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, CredentialForms) {
  auto auth = Make(true, false);
  ASSERT_NE(auth, nullptr);
  const std::string lower = std::string("bearer ") + kInferenceToken;
  const std::string spaced = std::string("  Bearer   ") + kInferenceToken + " ";
  EXPECT_EQ(Code(*auth, kInfer, {{"authorization", lower}}), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kInfer, {{"authorization", spaced}}), absl::StatusCode::kOk);
  // Triton's restricted-protocol header: any key, the value is the token.
  EXPECT_EQ(Code(*auth, kInfer, {{"triton-grpc-protocol-infer-key", kInferenceToken}}),
            absl::StatusCode::kOk);
  // Not a bearer token: the raw token, Basic, an empty bearer.
  EXPECT_EQ(Code(*auth, kInfer, {{"authorization", kInferenceToken}}),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(*auth, kInfer, {{"authorization", "Basic dXNlcjpwYXNz"}}),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(*auth, kInfer, {{"authorization", "Bearer "}}),
            absl::StatusCode::kUnauthenticated);
  // Another header carrying the token is not a credential.
  EXPECT_EQ(Code(*auth, kInfer, {{"x-api-key", kInferenceToken}}),
            absl::StatusCode::kUnauthenticated);
  // Any good credential among several is enough.
  EXPECT_EQ(Code(*auth, kInfer, {{"authorization", "Bearer stale"}, {"authorization", lower}}),
            absl::StatusCode::kOk);
  const Authorizer::Decision malformed = auth->Authorize(kInfer, {{"authorization", "Basic x"}});
  EXPECT_THAT(malformed.status.message(), HasSubstr("not a bearer token"));
  EXPECT_THAT(malformed.status.message(), HasSubstr("ModelInfer"));
}

TEST_F(AuthorizerTest, CredentialsAreMarkedForRemoval) {
  auto auth = Make(true, false);
  ASSERT_NE(auth, nullptr);
  const std::string bearer = std::string("Bearer ") + kInferenceToken;
  const Md md = {{":path", kInfer},
                 {"authorization", bearer},
                 {"user-agent", "test"},
                 {"triton-grpc-protocol-k", "v"}};
  const Authorizer::Decision decision = auth->Authorize(kInfer, md);
  EXPECT_TRUE(decision.status.ok()) << decision.status;
  EXPECT_THAT(decision.credentials, ElementsAre(1u, 3u));
}

TEST_F(AuthorizerTest, InferenceTokensOnlyDisableControlRpcs) {
  auto auth = Make(true, false);
  ASSERT_NE(auth, nullptr);
  EXPECT_FALSE(auth->control_rpcs_enabled());
  EXPECT_EQ(Code(*auth, kInfer, Bearer(kInferenceToken)), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kIndex, Bearer(kInferenceToken)), absl::StatusCode::kOk);
  for (const char* path : {kLoad, kShmRegister, kProfile}) {
    EXPECT_EQ(Code(*auth, path, {}), absl::StatusCode::kPermissionDenied) << path;
    EXPECT_EQ(Code(*auth, path, Bearer(kInferenceToken)), absl::StatusCode::kPermissionDenied);
  }
  EXPECT_THAT(auth->Authorize(kLoad, {}).status.message(), HasSubstr("control_token_file"));
}

TEST_F(AuthorizerTest, ControlTokensOnlyLeaveInferenceOpen) {
  auto auth = Make(false, true);
  ASSERT_NE(auth, nullptr);
  EXPECT_EQ(Code(*auth, kInfer, {}), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kIndex, {}), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kLoad, {}), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(*auth, kLoad, Bearer(kControlToken)), absl::StatusCode::kOk);
}

TEST_F(AuthorizerTest, ControlRpcsDisabledWithoutTokens) {
  auto auth = Make(false, false, /*control_enabled=*/false);
  ASSERT_NE(auth, nullptr);
  EXPECT_EQ(Code(*auth, kInfer, {}), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kLive, {}), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kLoad, {}), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code(*auth, kProfile, Bearer(kControlToken)), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(auth->Authorize(kLoad, {}).status.message(), HasSubstr("control_rpcs: disabled"));
}

TEST_F(AuthorizerTest, RotatedTokensTakeEffectOnReload) {
  auto auth = Make(true, true);
  ASSERT_NE(auth, nullptr);
  Write("inference", "inference-rotated-2\n");
  EXPECT_EQ(Code(*auth, kInfer, Bearer("inference-rotated-2")), absl::StatusCode::kUnauthenticated);
  auth->ReloadNow();
  EXPECT_EQ(Code(*auth, kInfer, Bearer("inference-rotated-2")), absl::StatusCode::kOk);
  EXPECT_EQ(Code(*auth, kInfer, Bearer(kInferenceToken)), absl::StatusCode::kUnauthenticated);
  // A broken file keeps the tokens in force.
  Write("inference", "inference-rotated-2\nbad token\n");
  auth->ReloadNow();
  EXPECT_EQ(Code(*auth, kInfer, Bearer("inference-rotated-2")), absl::StatusCode::kOk);
}

TEST_F(AuthorizerTest, CreateNamesTheKeyOfABadFile) {
  Authorizer::Options options;
  options.inference_token_file = (dir_ / "absent").string();
  auto auth = Authorizer::Create(options);
  ASSERT_FALSE(auth.ok());
  EXPECT_EQ(auth.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(auth.status().message(), HasSubstr("inference_token_file"));
}

}  // namespace
}  // namespace onyx::server
