#include "server/grpc/request_decoder.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/memory/test_region.h"
#include "server/scheduling/overload.h"

namespace onyx::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A batched model "m": a FP32 [-1, 2] and b INT64 [-1]; outputs y, z.
class RequestDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(region_.ok()); }

  // a = [[1, 2], [3, 4]], b = [7, 8] as raw contents.
  static inference::ModelInferRequest Request() {
    inference::ModelInferRequest request;
    request.set_model_name("m");
    auto* a = request.add_inputs();
    a->set_name("a");
    a->set_datatype("FP32");
    a->add_shape(2);
    a->add_shape(2);
    const float av[] = {1, 2, 3, 4};
    request.add_raw_input_contents(std::string(reinterpret_cast<const char*>(av), sizeof(av)));
    auto* b = request.add_inputs();
    b->set_name("b");
    b->set_datatype("INT64");
    b->add_shape(2);
    const int64_t bv[] = {7, 8};
    request.add_raw_input_contents(std::string(reinterpret_cast<const char*>(bv), sizeof(bv)));
    return request;
  }

  static void SetShm(inference::ModelInferRequest::InferInputTensor* input, int64_t offset,
                     int64_t size) {
    auto& params = *input->mutable_parameters();
    params["shared_memory_region"].set_string_param("region");
    params["shared_memory_byte_size"].set_int64_param(size);
    params["shared_memory_offset"].set_int64_param(offset);
  }

  absl::StatusOr<DecodedInferRequest> Decode(const inference::ModelInferRequest& request,
                                             ParseLimits limits = {}) {
    admitted_.clear();
    return DecodeInferRequest(request, signature_, registry_, limits, [this](int64_t bytes) {
      admitted_.push_back(bytes);
      return absl::OkStatus();
    });
  }

  // The values of a decoded FP32 tensor.
  static std::vector<float> Floats(const onyx::Value& value) {
    const onyx::Tensor& t = value.tensor();
    return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
  }

  const std::vector<TensorSpec> inputs_ = {{"a", onyx::DataType::kFloat, {-1, 2}},
                                           {"b", onyx::DataType::kInt64, {-1}}};
  const std::vector<TensorSpec> outputs_ = {{"y", onyx::DataType::kFloat, {-1}},
                                            {"z", onyx::DataType::kFloat, {-1}}};
  const ModelSignature signature_{"m", inputs_, outputs_, /*max_batch_size=*/4};
  TestRegion region_{"region", 256};
  char* const mapping_ = region_.data();
  SharedMemoryRegistry& registry_ = region_.registry();
  std::vector<int64_t> admitted_;
};

TEST_F(RequestDecoderTest, RawInputsAreViewedInPlace) {
  const inference::ModelInferRequest request = Request();
  absl::StatusOr<DecodedInferRequest> decoded = Decode(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const InferenceRequest& r = *decoded->request;
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].first, "a");
  EXPECT_THAT(Floats(r.inputs[0].second), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(r.inputs[0].second.tensor().data<float>(),
            reinterpret_cast<const float*>(request.raw_input_contents(0).data()));
  EXPECT_EQ(r.inputs[1].second.tensor().data<int64_t>()[1], 8);
  EXPECT_EQ(r.batch_size, 2);
  EXPECT_THAT(r.output_names, ElementsAre("y", "z"));
  EXPECT_EQ(r.timeout, absl::InfiniteDuration());
  EXPECT_THAT(admitted_, ElementsAre(static_cast<int64_t>(request.ByteSizeLong())));
  EXPECT_EQ(decoded->bytes, admitted_[0]);
}

TEST_F(RequestDecoderTest, SharedMemoryInputsAreCopiedAndRawIndexedOverTheOthers) {
  const float av[] = {5, 6, 7, 8};
  std::memcpy(mapping_ + 16, av, sizeof(av));
  inference::ModelInferRequest request = Request();
  SetShm(request.mutable_inputs(0), 16, sizeof(av));
  // Only b's bytes remain: raw_input_contents indexed over non-shm inputs.
  request.mutable_raw_input_contents()->DeleteSubrange(0, 1);
  absl::StatusOr<DecodedInferRequest> decoded = Decode(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(Floats(decoded->request->inputs[0].second), ElementsAre(5, 6, 7, 8));
  EXPECT_EQ(decoded->request->inputs[1].second.tensor().data<int64_t>()[0], 7);
  // The region changing after decoding does not change the request.
  std::memset(mapping_ + 16, 0, sizeof(av));
  EXPECT_THAT(Floats(decoded->request->inputs[0].second), ElementsAre(5, 6, 7, 8));
  EXPECT_THAT(admitted_, ElementsAre(static_cast<int64_t>(request.ByteSizeLong() + sizeof(av))));

  // Indexed by position: the shm input's own entry is ignored.
  *request.mutable_raw_input_contents()->Add() = request.raw_input_contents(0);
  request.set_raw_input_contents(0, "ignored");
  std::memcpy(mapping_ + 16, av, sizeof(av));
  decoded = Decode(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(Floats(decoded->request->inputs[0].second), ElementsAre(5, 6, 7, 8));
}

TEST_F(RequestDecoderTest, AdmissionComesBeforeValidationAndItsStatusIsKept) {
  inference::ModelInferRequest request = Request();
  request.mutable_inputs(0)->set_datatype("FP64");  // would fail validation
  const absl::Status refusal =
      Rejected(absl::ResourceExhaustedError("budget spent"), RejectionReason::kServerInflightBytes,
               absl::Milliseconds(5));
  int calls = 0;
  absl::StatusOr<DecodedInferRequest> decoded =
      DecodeInferRequest(request, signature_, registry_, ParseLimits{}, [&](int64_t) {
        ++calls;
        return refusal;
      });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(decoded.status(), refusal);
  EXPECT_EQ(RejectionReasonOf(decoded.status()), RejectionReason::kServerInflightBytes);
}

TEST_F(RequestDecoderTest, SharedMemoryErrorsNameTheModelAndTheInput) {
  inference::ModelInferRequest request = Request();
  SetShm(request.mutable_inputs(0), 250, 16);  // past the 256-byte region
  absl::StatusOr<DecodedInferRequest> outside = Decode(request);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outside.status().message(), HasSubstr("model 'm': input 'a': "));
  EXPECT_TRUE(admitted_.empty());  // refused before admission

  (*request.mutable_inputs(0)->mutable_parameters())["shared_memory_region"].set_string_param("x");
  EXPECT_EQ(Decode(request).status().code(), absl::StatusCode::kNotFound);

  request = Request();
  SetShm(request.mutable_inputs(0), 0, 16);
  request.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1);
  EXPECT_THAT(Decode(request).status().message(),
              HasSubstr("input 'a': typed contents and shared memory given for one input"));

  request = Request();
  SetShm(request.mutable_inputs(0), 0, 16);
  request.clear_raw_input_contents();
  request.mutable_inputs(1)->mutable_contents()->add_int64_contents(1);
  EXPECT_THAT(Decode(request).status().message(),
              HasSubstr("input 'b': typed contents cannot be mixed with shared memory inputs"));

  request = Request();
  SetShm(request.mutable_inputs(0), 0, 16);
  request.clear_raw_input_contents();
  EXPECT_THAT(Decode(request).status().message(), HasSubstr("input 'b': no raw_input_contents"));
}

TEST_F(RequestDecoderTest, StructureErrors) {
  inference::ModelInferRequest request = Request();
  request.add_raw_input_contents("extra");
  EXPECT_THAT(Decode(request).status().message(),
              HasSubstr("model 'm': expected 2 raw_input_contents (one per input), received 3"));

  request = Request();
  request.mutable_inputs(1)->mutable_contents()->add_int64_contents(7);
  EXPECT_THAT(Decode(request).status().message(),
              HasSubstr("input 'b': raw_input_contents and typed contents cannot be mixed"));
}

TEST_F(RequestDecoderTest, ValidationErrorsNameWhatIsWrong) {
  struct Case {
    std::function<void(inference::ModelInferRequest*)> edit;
    absl::StatusCode code;
    const char* message;
  };
  const Case cases[] =
      {
          {[](auto* r) { r->mutable_inputs(1)->set_name("c"); }, absl::StatusCode::kInvalidArgument,
           "unknown input 'c' (expected one of: a, b)"},
          {[](auto* r) { r->mutable_inputs(1)->set_name("a"); }, absl::StatusCode::kInvalidArgument,
           "input 'a' given twice"},
          {[](auto* r) {
    r->mutable_inputs()->RemoveLast();
    r->mutable_raw_input_contents()->RemoveLast();
           },
           absl::StatusCode::kInvalidArgument, "missing input 'b' (INT64 [-1])"},
          {[](auto* r) { r->mutable_inputs(0)->set_datatype("FP64"); },
           absl::StatusCode::kInvalidArgument, "input 'a': expected datatype FP32, received FP64"},
          {[](auto* r) { r->mutable_inputs(0)->set_shape(1, 3); },
           absl::StatusCode::kInvalidArgument,
           "input 'a': expected shape [-1,2] (rank 2), received [2,3] (rank 2)"},
          {[](auto* r) { r->mutable_inputs(1)->set_shape(0, 3); },
           absl::StatusCode::kInvalidArgument,
           "input 'b': batch size 3 differs from the other inputs' 2"},
          {[](auto* r) {
    r->mutable_inputs(0)->set_shape(0, 5);
    r->mutable_inputs(1)->set_shape(0, 5);
           },
           absl::StatusCode::kInvalidArgument,
           "input 'a': expected a batch size in [1, 4] (max_batch_size), received 5"},
             {[](auto* r) { r->mutable_inputs(0)->set_shape(0, int64_t{1} << 62); },
              absl::StatusCode::kInvalidArgument, "overflows int64"},
             {[](auto* r) { r->mutable_inputs(0)->set_shape(0, -2); },
              absl::StatusCode::kInvalidArgument, "negative dimension"},
             {[](auto* r) { r->mutable_raw_input_contents(1)->pop_back(); },
              absl::StatusCode::kInvalidArgument,
              "expected 16 bytes of raw contents for INT64 [2], received 15"},
             {[](auto* r) { r->add_outputs()->set_name("w"); }, absl::StatusCode::kInvalidArgument,
              "unknown output 'w' (expected one of: y, z)"},
             {[](auto* r) {
    r->add_outputs()->set_name("y");
    r->add_outputs()->set_name("y");
              },
              absl::StatusCode::kInvalidArgument, "output 'y' requested twice"},
      {[](auto* r) { (*r->mutable_parameters())["timeout"].set_int64_param(-1); },
       absl::StatusCode::kInvalidArgument, "parameter 'timeout' must be a non-negative integer"},
      };
  for (const Case& c : cases) {
    inference::ModelInferRequest request = Request();
    c.edit(&request);
    absl::StatusOr<DecodedInferRequest> decoded = Decode(request);
    EXPECT_EQ(decoded.status().code(), c.code) << c.message;
    EXPECT_THAT(decoded.status().message(), HasSubstr(c.message));
    EXPECT_THAT(decoded.status().message(), HasSubstr("model 'm': "));
  }
}

TEST_F(RequestDecoderTest, ElementLimitIsResourceExhaustedBeforeAnyAllocation) {
  inference::ModelInferRequest request = Request();
  request.mutable_inputs(0)->set_shape(0, 1000000);  // 2e6 elements; the bytes are 16
  request.mutable_inputs(1)->set_shape(0, 1000000);
  ParseLimits limits;
  limits.max_elements_per_input = 1000;
  absl::StatusOr<DecodedInferRequest> decoded = Decode(request, limits);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(decoded.status().message(),
              HasSubstr("input 'a': shape [1000000,2] has 2000000 elements, more than "
                        "max_elements_per_input (1000)"));
}

TEST_F(RequestDecoderTest, TypedContentsAndTimeout) {
  inference::ModelInferRequest request = Request();
  request.clear_raw_input_contents();
  for (float v : {1.5f, 2.5f, 3.5f, 4.5f})
    request.mutable_inputs(0)->mutable_contents()->add_fp32_contents(v);
  for (int64_t v : {9, 10}) request.mutable_inputs(1)->mutable_contents()->add_int64_contents(v);
  (*request.mutable_parameters())["timeout"].set_int64_param(2500);
  request.add_outputs()->set_name("z");
  absl::StatusOr<DecodedInferRequest> decoded = Decode(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(Floats(decoded->request->inputs[0].second), ElementsAre(1.5, 2.5, 3.5, 4.5));
  EXPECT_EQ(decoded->request->timeout, absl::Microseconds(2500));
  EXPECT_THAT(decoded->request->output_names, ElementsAre("z"));
}

}  // namespace
}  // namespace onyx::server
