#include "graph/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A directory holding weights.bin: 8 bytes of padding, then four floats
// (1.5, -2, 3.25, 4), 24 bytes in all.
class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest runs the tests of this fixture in
    // parallel processes, which must not rewrite each other's file.
    dir_ =
        ::testing::TempDir() + "/tensor_proto_test_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    const float values[4] = {1.5f, -2.0f, 3.25f, 4.0f};
    std::string bytes(8, '\x7f');
    bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
    ASSERT_EQ(bytes.size(), 24u);
    std::ofstream(dir_ + "/weights.bin", std::ios::binary).write(bytes.data(), bytes.size());
  }

  // A float tensor 'w' of shape [n] stored in weights.bin with the given
  // external_data entries after "location".
  static onnx::TensorProto External(int64_t n, const std::vector<std::pair<std::string, std::string>>& entries) {
    onnx::TensorProto proto;
    proto.set_name("w");
    proto.set_data_type(onnx::TensorProto::FLOAT);
    proto.add_dims(n);
    proto.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = proto.add_external_data();
    location->set_key("location");
    location->set_value("weights.bin");
    for (const auto& [key, value] : entries) {
      auto* entry = proto.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    return proto;
  }

  std::string dir_;
};

TEST_F(ExternalDataTest, ReadsTheRangeGivenByOffsetAndLength) {
  auto t = TensorFromProto(External(2, {{"offset", "12"}, {"length", "8"}}), dir_);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->num_elements(), 2);
  EXPECT_EQ(t->data<float>()[0], -2.0f);
  EXPECT_EQ(t->data<float>()[1], 3.25f);
}

TEST_F(ExternalDataTest, WithoutLengthReadsToTheEndOfTheFile) {
  auto t = TensorFromProto(External(4, {{"offset", "8"}}), dir_);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->num_elements(), 4);
  EXPECT_EQ(t->data<float>()[0], 1.5f);
  EXPECT_EQ(t->data<float>()[3], 4.0f);
}

TEST_F(ExternalDataTest, ReadsATensorBeyondTheFirstFourGigabytes) {
  // Large exports keep one weights file past 2 GB (and past 4 GB): offsets
  // must not pass through 32 bits. The file is sparse, so it costs no disk.
  const int64_t offset = (int64_t{1} << 32) + 4096;
  {
    std::fstream f(dir_ + "/weights.bin", std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(offset);
    const float values[2] = {6.5f, -7.25f};
    f.write(reinterpret_cast<const char*>(values), sizeof(values));
    ASSERT_TRUE(f.good());
  }
  auto t = TensorFromProto(External(2, {{"offset", std::to_string(offset)}, {"length", "8"}}), dir_);
  std::filesystem::remove(dir_ + "/weights.bin");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<float>()[0], 6.5f);
  EXPECT_EQ(t->data<float>()[1], -7.25f);
}

TEST_F(ExternalDataTest, NonNumericOffsetIsAnErrorNamingTensorKeyAndValue) {
  // "12abc" has a numeric prefix (which a lenient parse would read as 12);
  // "abc" has none (which a throwing parse would not survive).
  for (const char* offset : {"12abc", "abc", "", "0x0c", "1.5"}) {
    auto t = TensorFromProto(External(2, {{"offset", offset}, {"length", "8"}}), dir_);
    ASSERT_FALSE(t.ok()) << "offset '" << offset << "' accepted";
    EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
    EXPECT_THAT(t.status().message(), AllOf(HasSubstr("tensor 'w'"), HasSubstr("external data key 'offset'"),
                                            HasSubstr(std::string("received '") + offset + "'")));
  }
}

TEST_F(ExternalDataTest, NegativeLengthIsAnErrorNamingTensorKeyAndValue) {
  auto t = TensorFromProto(External(2, {{"offset", "8"}, {"length", "-4"}}), dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
  EXPECT_THAT(t.status().message(), AllOf(HasSubstr("tensor 'w'"), HasSubstr("'length'"), HasSubstr("'-4'")));
}

TEST_F(ExternalDataTest, OverflowingOffsetIsAnError) {
  // 2^64: one past what any 64-bit integer holds.
  auto t = TensorFromProto(External(2, {{"offset", "18446744073709551616"}}), dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              AllOf(HasSubstr("tensor 'w'"), HasSubstr("'offset'"), HasSubstr("'18446744073709551616'")));
  // 2^63 - 1 parses but lies past the 24-byte file.
  auto past = TensorFromProto(External(2, {{"offset", "9223372036854775807"}}), dir_);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), AllOf(HasSubstr("'offset' 9223372036854775807"), HasSubstr("24 bytes")));
}

TEST_F(ExternalDataTest, LengthPastTheEndOfTheFileIsAnError) {
  // Bytes [16, 32) of a 24-byte file.
  auto t = TensorFromProto(External(4, {{"offset", "16"}, {"length", "16"}}), dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
  EXPECT_THAT(t.status().message(), AllOf(HasSubstr("tensor 'w'"), HasSubstr("'length' 16"), HasSubstr("byte 32"),
                                          HasSubstr("weights.bin"), HasSubstr("of 24 bytes")));
  // A length that would overflow offset + length when added.
  auto huge = TensorFromProto(External(4, {{"offset", "16"}, {"length", "9223372036854775807"}}), dir_);
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(), HasSubstr("'length' 9223372036854775807"));
}

TEST_F(ExternalDataTest, RangeWithinTheFileButOfTheWrongSizeIsAnError) {
  // 8 bytes for a tensor of four floats (16 bytes).
  auto t = TensorFromProto(External(4, {{"offset", "8"}, {"length", "8"}}), dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              AllOf(HasSubstr("tensor 'w'"), HasSubstr("expected 16 bytes"), HasSubstr("found 8")));
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

// A shape that overstates its data is refused before anything of that size
// is allocated (2^60 floats would abort, 2^34 used to zero 64 GiB first).
TEST(TensorProtoTest, ShapesOverstatingTheirDataAreRefusedWithoutAllocating) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(int64_t{1} << 40);
  p.add_dims(int64_t{1} << 20);
  p.set_raw_data(std::string(16, '\0'));
  absl::StatusOr<Tensor> t = TensorFromProto(p);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("expected 4611686018427387904 bytes of data, found 16"), std::string::npos)
      << t.status();
  p.clear_raw_data();
  p.add_float_data(1.f);
  t = TensorFromProto(p);
  EXPECT_NE(t.status().message().find("expected 1152921504606846976 values, found 1"), std::string::npos) << t.status();
  p.add_dims(int64_t{1} << 40);  // 2^100 elements
  t = TensorFromProto(p);
  EXPECT_NE(t.status().message().find("has more elements than a 64-bit count holds"), std::string::npos) << t.status();
  t = TakeTensorFromProto(&p);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onyx
