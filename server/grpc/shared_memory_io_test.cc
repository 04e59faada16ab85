#include "server/grpc/shared_memory_io.h"

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/memory/test_region.h"

namespace onyx::server {
namespace {

using ::testing::HasSubstr;

class SharedMemoryIoTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(region_.ok()); }
  static void SetShm(google::protobuf::Map<std::string, inference::InferParameter>* params,
                     int64_t offset, int64_t size) {
    (*params)["shared_memory_region"].set_string_param("region");
    (*params)["shared_memory_byte_size"].set_int64_param(size);
    (*params)["shared_memory_offset"].set_uint64_param(offset);
  }
  TestRegion region_{"region", 256};
  char* const mapping_ = region_.data();
  SharedMemoryRegistry& registry_ = region_.registry();
};

TEST_F(SharedMemoryIoTest, RefsParseFromTheParameters) {
  google::protobuf::Map<std::string, inference::InferParameter> params;
  absl::StatusOr<std::optional<SharedMemoryRef>> none = ParseSharedMemoryRef(params);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  SetShm(&params, 10, 7);
  absl::StatusOr<std::optional<SharedMemoryRef>> ref = ParseSharedMemoryRef(params);
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_TRUE(ref->has_value());
  EXPECT_EQ((*ref)->region, "region");
  EXPECT_EQ((*ref)->offset, 10u);
  EXPECT_EQ((*ref)->byte_size, 7u);
  params["shared_memory_byte_size"].set_int64_param(-1);
  EXPECT_THAT(ParseSharedMemoryRef(params).status().message(),
              HasSubstr("'shared_memory_byte_size' must be a non-negative integer"));
  params.erase("shared_memory_byte_size");
  EXPECT_THAT(ParseSharedMemoryRef(params).status().message(),
              HasSubstr("'shared_memory_byte_size' missing"));
  params["shared_memory_region"].set_int64_param(3);
  EXPECT_THAT(ParseSharedMemoryRef(params).status().message(),
              HasSubstr("'shared_memory_region' must be a string"));
}

TEST_F(SharedMemoryIoTest, ReadCopiesTheRangeAndChecksItFirst) {
  std::memcpy(mapping_ + 10, "SHMDATA", 7);
  absl::StatusOr<std::string> bytes = ReadSharedMemory({"region", 7, 10}, registry_);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "SHMDATA");
  EXPECT_EQ(ReadSharedMemory({"region", 16, 250}, registry_).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A size that no buffer could hold is refused by the range check.
  EXPECT_EQ(ReadSharedMemory({"region", uint64_t{1} << 62, 0}, registry_).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadSharedMemory({"other", 1, 0}, registry_).status().code(),
            absl::StatusCode::kNotFound);
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
