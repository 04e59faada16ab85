// Every method of every service onyx's protos define — read from the protobuf
// ServiceDescriptors, so a new RPC is covered without editing this test — is
// called over a real gRPC server built with ServerCredentialsFor(), without a
// token and with each kind of token, and must get the code its class calls for.
#include "server/grpc/auth_credentials.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "admin.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "grpc_service.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "health.grpc.pb.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;

constexpr char kInferenceToken[] = "inference-4fQk9sLw2Rt7";
constexpr char kControlToken[] = "control-8bZx3Nm6Vp1c";
// What the stand-in handler answers, so a call that got through is told apart
// from a refusal.
constexpr char kReachedHandler[] = "reached the handler";

// Answers every call UNIMPLEMENTED, naming the credential metadata it could
// still see (none may reach a handler).
class EchoGenericService final : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    int credentials = 0;
    for (const auto& [key, value] : context->client_metadata()) {
      const absl::string_view k(key.data(), key.size());
      if (k == "authorization" || absl::StartsWith(k, "triton-grpc-protocol-")) ++credentials;
    }
    class Reactor final : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(int credentials) {
        Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                            absl::StrCat(kReachedHandler, "; credentials visible: ", credentials)));
      }
      void OnDone() override { delete this; }
    };
    return new Reactor(credentials);
  }
};

// "/package.Service/Method" of every method of every service in onyx's protos.
std::vector<std::string> AllMethodPaths() {
  std::vector<const google::protobuf::FileDescriptor*> files = {
      inference::ModelInferRequest::descriptor()->file(),
      grpc::health::v1::HealthCheckRequest::descriptor()->file(),
      onyx::admin::v1::DumpArenasRequest::descriptor()->file(),
  };
  std::vector<std::string> paths;
  for (const auto* file : files) {
    for (int s = 0; s < file->service_count(); ++s) {
      const google::protobuf::ServiceDescriptor* service = file->service(s);
      for (int m = 0; m < service->method_count(); ++m) {
        paths.push_back(absl::StrCat("/", service->full_name(), "/", service->method(m)->name()));
      }
    }
  }
  return paths;
}

// This test's own view of which RPCs are public and which need a control
// token (README.md, Security); everything else is inference or metadata.
bool IsPublic(const std::string& path) {
  return path == "/grpc.health.v1.Health/Check" || path == "/grpc.health.v1.Health/Watch" ||
         path == "/inference.GRPCInferenceService/ServerLive" ||
         path == "/inference.GRPCInferenceService/ServerReady";
}
bool IsControl(const std::string& path) {
  return absl::StrContains(path, "/RepositoryModel") || absl::StrContains(path, "SharedMemory") ||
         absl::StartsWith(path, "/onyx.admin.v1.Admin/");
}
bool IsInference(const std::string& path) {
  return path == "/inference.GRPCInferenceService/ModelInfer" ||
         path == "/inference.GRPCInferenceService/ModelStreamInfer";
}

class AuthCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("auth_credentials_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "inference") << kInferenceToken << "\n";
    std::ofstream(dir_ / "control") << "# operators\n" << kControlToken << "\n";
    Authorizer::Options options;
    options.inference_token_file = (dir_ / "inference").string();
    options.control_token_file = (dir_ / "control").string();
    options.reload_interval = absl::InfiniteDuration();
    auto authorizer = Authorizer::Create(options);
    ASSERT_TRUE(authorizer.ok()) << authorizer.status();
    authorizer_ = std::move(*authorizer);

    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", ServerCredentialsFor(nullptr, authorizer_.get()),
                             &port);
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port, 0);
    channel_ =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
    fs::remove_all(dir_);
  }

  // Calls `path` with one empty message and the given metadata; the status.
  grpc::Status Call(const std::string& path, const std::string& key = "",
                    const std::string& value = "") {
    grpc::GenericStub stub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!key.empty()) context.AddMetadata(key, value);
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
    grpc::Slice empty("");
    request = grpc::ByteBuffer(&empty, 1);
    absl::Notification done;
    grpc::Status result;
    stub.UnaryCall(&context, path, grpc::StubOptions(), &request, &response,
                   [&](grpc::Status status) {
      result = std::move(status);
      done.Notify();
    });
    done.WaitForNotification();
    return result;
  }

  static bool Reached(const grpc::Status& status) {
    return status.error_code() == grpc::StatusCode::UNIMPLEMENTED &&
           absl::StrContains(status.error_message(), kReachedHandler);
  }

  fs::path dir_;
  std::unique_ptr<Authorizer> authorizer_;
  EchoGenericService service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(AuthCredentialsTest, EveryMethodIsClassifiedOnPurpose) {
  const std::vector<std::string> paths = AllMethodPaths();
  ASSERT_GE(paths.size(), 22u);  // 18 of the inference service, 2 health, 2 admin
  for (const std::string& path : paths) {
    EXPECT_TRUE(IsKnownRpc(path)) << path << " is not in server/auth/rpc_classes.cc";
    const RpcClass expected = IsPublic(path)      ? RpcClass::kPublic
                              : IsControl(path)   ? RpcClass::kControl
                              : IsInference(path) ? RpcClass::kInference
                                                  : RpcClass::kMetadata;
    EXPECT_EQ(RpcClassName(ClassifyRpc(path)), RpcClassName(expected)) << path;
  }
}

TEST_F(AuthCredentialsTest, EveryMethodWithoutATokenIsUnauthenticatedUnlessPublic) {
  for (const std::string& path : AllMethodPaths()) {
    const grpc::Status status = Call(path);
    if (IsPublic(path)) {
      EXPECT_TRUE(Reached(status)) << path << ": " << status.error_message();
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << path << ": " << status.error_message();
    }
  }
  // A method no service has is refused too, before gRPC could say UNIMPLEMENTED.
  EXPECT_EQ(Call("/inference.GRPCInferenceService/NotYetWritten").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthCredentialsTest, EachTokenOpensItsOwnClassOnly) {
  const std::string inference = absl::StrCat("Bearer ", kInferenceToken);
  const std::string control = absl::StrCat("Bearer ", kControlToken);
  for (const std::string& path : AllMethodPaths()) {
    const grpc::Status with_inference = Call(path, "authorization", inference);
    const grpc::Status with_control = Call(path, "authorization", control);
    const grpc::Status with_unknown = Call(path, "authorization", "Bearer not-a-known-token");
    if (IsPublic(path)) {
      EXPECT_TRUE(Reached(with_unknown)) << path;
      continue;
    }
    EXPECT_EQ(with_unknown.error_code(), grpc::StatusCode::UNAUTHENTICATED) << path;
    if (IsControl(path)) {
      EXPECT_EQ(with_inference.error_code(), grpc::StatusCode::PERMISSION_DENIED) << path;
      EXPECT_TRUE(Reached(with_control)) << path << ": " << with_control.error_message();
    } else if (IsInference(path)) {
      EXPECT_TRUE(Reached(with_inference)) << path << ": " << with_inference.error_message();
      EXPECT_EQ(with_control.error_code(), grpc::StatusCode::PERMISSION_DENIED) << path;
    } else {
      EXPECT_TRUE(Reached(with_inference)) << path;
      EXPECT_TRUE(Reached(with_control)) << path;
    }
    for (const grpc::Status& status : {with_inference, with_control, with_unknown}) {
      EXPECT_THAT(status.error_message(), ::testing::Not(::testing::HasSubstr(kInferenceToken)));
      EXPECT_THAT(status.error_message(), ::testing::Not(::testing::HasSubstr(kControlToken)));
      EXPECT_THAT(status.error_message(), ::testing::Not(::testing::HasSubstr("not-a-known")));
    }
  }
}

TEST_F(AuthCredentialsTest, HandlersNeverSeeCredentials) {
  const grpc::Status bearer = Call("/inference.GRPCInferenceService/ModelInfer", "authorization",
                                   absl::StrCat("Bearer ", kInferenceToken));
  ASSERT_TRUE(Reached(bearer)) << bearer.error_message();
  EXPECT_THAT(bearer.error_message(), ::testing::HasSubstr("credentials visible: 0"));
  const grpc::Status triton = Call("/inference.GRPCInferenceService/ModelInfer",
                                   "triton-grpc-protocol-infer-key", kInferenceToken);
  ASSERT_TRUE(Reached(triton)) << triton.error_message();
  EXPECT_THAT(triton.error_message(), ::testing::HasSubstr("credentials visible: 0"));
}

}  // namespace
}  // namespace onyx::server
