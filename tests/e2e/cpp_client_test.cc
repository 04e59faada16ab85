// End-to-end: starts onyxd on free loopback ports and calls it with the C++
// gRPC stub. Expected outputs come from the demo repository's test data, which
// the generator computed with numpy, independently of the engine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "grpc_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "health.grpc.pb.h"
#include "onyx/value_io.h"

namespace {

std::string g_onyxd;
std::string g_repo;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

class OnyxdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int grpc_port = FreePort();
    int metrics_port = FreePort();
    address_ = "127.0.0.1:" + std::to_string(grpc_port);
    std::string metrics = "127.0.0.1:" + std::to_string(metrics_port);
    pid_ = fork();
    if (pid_ == 0) {
      execl(g_onyxd.c_str(), g_onyxd.c_str(), "--model-repository", g_repo.c_str(), "--grpc-address",
            address_.c_str(), "--metrics-address", metrics.c_str(), "--log-level", "warn", nullptr);
      _exit(127);
    }
    channel_ = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    stub_ = inference::GRPCInferenceService::NewStub(channel_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
      inference::ServerReadyRequest req;
      inference::ServerReadyResponse resp;
      if (stub_->ServerReady(&ctx, req, &resp).ok() && resp.ready()) return;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    FAIL() << "onyxd did not become ready on " << address_;
  }

  static void TearDownTestSuite() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) != pid_; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    stub_.reset();
    channel_.reset();
  }

  static onyx::Tensor LoadTensor(const std::string& path) {
    auto value = onyx::ReadValueFile(path, onyx::ValueInfo::Kind::kTensor);
    EXPECT_TRUE(value.ok()) << value.status();
    return value->tensor();
  }

  static inference::ModelInferRequest RawRequest(const std::string& model, const std::string& input,
                                                  const onyx::Tensor& tensor) {
    inference::ModelInferRequest req;
    req.set_model_name(model);
    auto* in = req.add_inputs();
    in->set_name(input);
    in->set_datatype("FP32");
    for (int64_t d : tensor.dims()) in->add_shape(d);
    req.add_raw_input_contents(std::string(static_cast<const char*>(tensor.raw()), tensor.byte_size()));
    return req;
  }

  static void ExpectClose(const std::string& raw, const onyx::Tensor& expected) {
    ASSERT_EQ(raw.size(), expected.byte_size());
    std::vector<float> got(expected.num_elements());
    std::memcpy(got.data(), raw.data(), raw.size());
    for (int64_t i = 0; i < expected.num_elements(); ++i) {
      float want = expected.data<float>()[i];
      EXPECT_NEAR(got[i], want, 1e-5 + 1e-4 * std::fabs(want)) << "element " << i;
    }
  }

  static inline pid_t pid_ = -1;
  static inline std::string address_;
  static inline std::shared_ptr<grpc::Channel> channel_;
  static inline std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(OnyxdTest, MlpInferMatchesNumpyReference) {
  onyx::Tensor input = LoadTensor(g_repo + "/mlp/1/test_data_set_0/input_0.pb");
  onyx::Tensor expected = LoadTensor(g_repo + "/mlp/1/test_data_set_0/output_0.pb");
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  grpc::Status status = stub_->ModelInfer(&ctx, RawRequest("mlp", "input", input), &resp);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(resp.outputs_size(), 1);
  EXPECT_EQ(resp.outputs(0).name(), "probabilities");
  EXPECT_EQ(resp.outputs(0).datatype(), "FP32");
  ASSERT_EQ(resp.raw_output_contents_size(), 1);
  ExpectClose(resp.raw_output_contents(0), expected);
}

TEST_F(OnyxdTest, CnnInferMatchesNumpyReference) {
  onyx::Tensor input = LoadTensor(g_repo + "/cnn/1/test_data_set_0/input_0.pb");
  onyx::Tensor expected = LoadTensor(g_repo + "/cnn/1/test_data_set_0/output_0.pb");
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  grpc::Status status = stub_->ModelInfer(&ctx, RawRequest("cnn", "image", input), &resp);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(resp.raw_output_contents_size(), 1);
  ExpectClose(resp.raw_output_contents(0), expected);
}

TEST_F(OnyxdTest, BadRequestsGetPreciseStatusesAndServerKeepsServing) {
  onyx::Tensor input = LoadTensor(g_repo + "/mlp/1/test_data_set_0/input_0.pb");
  {
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    auto status = stub_->ModelInfer(&ctx, RawRequest("no_such_model", "input", input), &resp);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  }
  {
    auto req = RawRequest("mlp", "input", input);
    req.mutable_inputs(0)->set_datatype("INT32");
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    auto status = stub_->ModelInfer(&ctx, req, &resp);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("input"), std::string::npos) << status.error_message();
    EXPECT_NE(status.error_message().find("FP32"), std::string::npos) << status.error_message();
  }
  {
    auto req = RawRequest("mlp", "input", input);
    req.mutable_raw_input_contents(0)->pop_back();
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    auto status = stub_->ModelInfer(&ctx, req, &resp);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  }
  {
    auto req = RawRequest("mlp", "input", input);
    req.mutable_inputs(0)->set_shape(1, 15);
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    auto status = stub_->ModelInfer(&ctx, req, &resp);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  }
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  EXPECT_TRUE(stub_->ModelInfer(&ctx, RawRequest("mlp", "input", input), &resp).ok());
}

TEST_F(OnyxdTest, MetadataAndHealth) {
  {
    grpc::ClientContext ctx;
    inference::ModelMetadataRequest req;
    req.set_name("cnn");
    inference::ModelMetadataResponse resp;
    ASSERT_TRUE(stub_->ModelMetadata(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.inputs_size(), 1);
    EXPECT_EQ(resp.inputs(0).name(), "image");
    EXPECT_EQ(resp.inputs(0).datatype(), "FP32");
    std::vector<int64_t> shape(resp.inputs(0).shape().begin(), resp.inputs(0).shape().end());
    EXPECT_EQ(shape, (std::vector<int64_t>{-1, 1, 8, 8}));
  }
  {
    grpc::ClientContext ctx;
    inference::RepositoryIndexRequest req;
    inference::RepositoryIndexResponse resp;
    ASSERT_TRUE(stub_->RepositoryIndex(&ctx, req, &resp).ok());
    int ready = 0;
    for (const auto& m : resp.models()) ready += m.state() == "READY";
    EXPECT_EQ(ready, 2);
  }
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 3) {
    fprintf(stderr, "usage: %s ONYXD DEMO_REPOSITORY\n", argv[0]);
    return 2;
  }
  g_onyxd = argv[1];
  g_repo = argv[2];
  return RUN_ALL_TESTS();
}
