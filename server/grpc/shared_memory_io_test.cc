#include "server/grpc/shared_memory_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using ::testing::HasSubstr;

class SharedMemoryIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = "/onyx_shm_io_test_" + std::to_string(getpid());
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 256), 0);
    mapping_ = static_cast<char*>(mmap(nullptr, 256, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    ASSERT_NE(mapping_, MAP_FAILED);
    ASSERT_TRUE(registry_.Register("region", key_, 0, 256).ok());
  }
  void TearDown() override {
    munmap(mapping_, 256);
    shm_unlink(key_.c_str());
  }
  static void SetShm(google::protobuf::Map<std::string, inference::InferParameter>* params,
                     int64_t offset, int64_t size) {
    (*params)["shared_memory_region"].set_string_param("region");
    (*params)["shared_memory_byte_size"].set_int64_param(size);
    (*params)["shared_memory_offset"].set_uint64_param(offset);
  }
  std::string key_;
  char* mapping_ = nullptr;
  SharedMemoryRegistry registry_;
};

TEST_F(SharedMemoryIoTest, NoSharedMemoryMeansNoCopy) {
  inference::ModelInferRequest request;
  request.add_inputs()->set_name("a");
  request.add_raw_input_contents("xyz");
  auto inlined = InlineSharedMemoryInputs(request, registry_);
  ASSERT_TRUE(inlined.ok());
  EXPECT_EQ(*inlined, nullptr);
}

TEST_F(SharedMemoryIoTest, InputsAreCopiedOutOfTheRegionInInputOrder) {
  std::memcpy(mapping_ + 10, "SHMDATA", 7);
  inference::ModelInferRequest request;
  SetShm(request.add_inputs()->mutable_parameters(), 10, 7);
  request.add_inputs()->set_name("raw");
  request.add_raw_input_contents("inline");  // indexed over the non-shm inputs
  auto inlined = InlineSharedMemoryInputs(request, registry_);
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  ASSERT_NE(*inlined, nullptr);
  ASSERT_EQ((*inlined)->raw_input_contents_size(), 2);
  EXPECT_EQ((*inlined)->raw_input_contents(0), "SHMDATA");
  EXPECT_EQ((*inlined)->raw_input_contents(1), "inline");
  EXPECT_FALSE((*inlined)->inputs(0).parameters().contains("shared_memory_region"));
}

TEST_F(SharedMemoryIoTest, InputErrorsNameTheModelAndTheInput) {
  inference::ModelInferRequest request;
  request.set_model_name("mlp");
  auto* input = request.add_inputs();
  input->set_name("x");
  SetShm(input->mutable_parameters(), 250, 16);
  auto outside = InlineSharedMemoryInputs(request, registry_);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outside.status().message(), HasSubstr("model 'mlp': input 'x': "));
  (*input->mutable_parameters())["shared_memory_region"].set_string_param("other");
  EXPECT_EQ(InlineSharedMemoryInputs(request, registry_).status().code(),
            absl::StatusCode::kNotFound);
  input->mutable_parameters()->erase("shared_memory_byte_size");
  (*input->mutable_parameters())["shared_memory_region"].set_string_param("region");
  EXPECT_THAT(InlineSharedMemoryInputs(request, registry_).status().message(),
              HasSubstr("shared_memory_byte_size"));
}

TEST_F(SharedMemoryIoTest, OutputsAreWrittenToTheRegionAndLeftEmptyInTheReply) {
  inference::ModelInferRequest request;
  auto* wanted = request.add_outputs();
  wanted->set_name("y");
  SetShm(wanted->mutable_parameters(), 100, 8);
  inference::ModelInferResponse response;
  response.add_outputs()->set_name("z");
  response.add_raw_output_contents("keep");
  response.add_outputs()->set_name("y");
  response.add_raw_output_contents("12345678");
  absl::StatusOr<SharedMemoryOutputs> outputs = ResolveSharedMemoryOutputs(request, registry_);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_TRUE(WriteSharedMemoryOutputs(request, *outputs, &response).ok());
  EXPECT_EQ(std::string(mapping_ + 100, 8), "12345678");
  EXPECT_EQ(response.raw_output_contents(0), "keep");
  EXPECT_EQ(response.raw_output_contents(1), "");
  EXPECT_EQ(response.outputs(1).parameters().at("shared_memory_region").string_param(), "region");

  response.set_raw_output_contents(1, "123456789");  // larger than byte_size 8
  absl::Status too_big = WriteSharedMemoryOutputs(request, *outputs, &response);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(), HasSubstr("output 'y'"));
}

TEST_F(SharedMemoryIoTest, OutputRegionsAreHeldFromAcceptSoUnregisteringMidRunLosesNothing) {
  inference::ModelInferRequest request;
  request.set_model_name("mlp");
  auto* wanted = request.add_outputs();
  wanted->set_name("y");
  SetShm(wanted->mutable_parameters(), 0, 4);
  absl::StatusOr<SharedMemoryOutputs> outputs = ResolveSharedMemoryOutputs(request, registry_);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_TRUE(registry_.Unregister("region").ok());  // while the request "runs"
  inference::ModelInferResponse response;
  response.add_outputs()->set_name("y");
  response.add_raw_output_contents("abcd");
  ASSERT_TRUE(WriteSharedMemoryOutputs(request, *outputs, &response).ok());
  EXPECT_EQ(std::string(mapping_, 4), "abcd");
  // A request accepted after the unregistration is refused before it runs.
  absl::StatusOr<SharedMemoryOutputs> late = ResolveSharedMemoryOutputs(request, registry_);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(late.status().message(), HasSubstr("model 'mlp': output 'y': "));
}

TEST_F(SharedMemoryIoTest, OutputRangesOutsideTheRegionAreRefusedAtAccept) {
  inference::ModelInferRequest request;
  auto* wanted = request.add_outputs();
  wanted->set_name("y");
  SetShm(wanted->mutable_parameters(), 200, 100);  // region is 256 bytes
  absl::StatusOr<SharedMemoryOutputs> outputs = ResolveSharedMemoryOutputs(request, registry_);
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outputs.status().message(), HasSubstr("output 'y'"));
}

}  // namespace
}  // namespace onyx::server
