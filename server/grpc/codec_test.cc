#include "server/grpc/codec.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using onyx::DataType;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Little-endian bytes of `values`, written byte by byte (not via memcpy of the
// host representation) so the test states the wire format on its own.
template <typename T>
std::string LittleEndian(std::vector<T> values) {
  std::string out;
  for (T v : values) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
  }
  return out;
}

template <typename T>
std::vector<T> Values(const onyx::Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

TEST(CodecTest, WireNamesMapToEngineTypes) {
  const std::vector<std::pair<const char*, DataType>> expected = {
      {"BOOL", DataType::kBool},     {"UINT8", DataType::kUint8},   {"UINT16", DataType::kUint16},
      {"UINT32", DataType::kUint32}, {"UINT64", DataType::kUint64}, {"INT8", DataType::kInt8},
      {"INT16", DataType::kInt16},   {"INT32", DataType::kInt32},   {"INT64", DataType::kInt64},
      {"FP16", DataType::kFloat16},  {"BF16", DataType::kBFloat16}, {"FP32", DataType::kFloat},
      {"FP64", DataType::kDouble},   {"BYTES", DataType::kString},
  };
  for (const auto& [name, type] : expected) {
    absl::StatusOr<DataType> parsed = WireToDataType(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, type) << name;
    EXPECT_EQ(DataTypeToWire(type), name);
  }
  EXPECT_FALSE(WireToDataType("fp32").ok());  // case-sensitive
  EXPECT_FALSE(WireToDataType("FLOAT").ok());
  EXPECT_EQ(DataTypeToWire(DataType::kComplex64), "");
}

TEST(CodecTest, ConfigEnumMatchesTriton) {
  EXPECT_EQ(DataTypeToConfig(DataType::kBool), 1);
  EXPECT_EQ(DataTypeToConfig(DataType::kUint8), 2);
  EXPECT_EQ(DataTypeToConfig(DataType::kUint64), 5);
  EXPECT_EQ(DataTypeToConfig(DataType::kInt8), 6);
  EXPECT_EQ(DataTypeToConfig(DataType::kInt64), 9);
  EXPECT_EQ(DataTypeToConfig(DataType::kFloat16), 10);
  EXPECT_EQ(DataTypeToConfig(DataType::kFloat), 11);
  EXPECT_EQ(DataTypeToConfig(DataType::kDouble), 12);
  EXPECT_EQ(DataTypeToConfig(DataType::kString), 13);
  EXPECT_EQ(DataTypeToConfig(DataType::kBFloat16), 14);
  EXPECT_EQ(DataTypeToConfig(DataType::kComplex128), 0);
}

TEST(CodecTest, DecodesRawFixedSizeTypes) {
  {
    auto t = DecodeRawTensor(DataType::kFloat, {2, 2}, LittleEndian<float>({1.5f, -2, 0, 8}));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->type(), DataType::kFloat);
    EXPECT_THAT(t->dims(), ElementsAre(2, 2));
    EXPECT_THAT(Values<float>(*t), ElementsAre(1.5f, -2.0f, 0.0f, 8.0f));
  }
  {
    auto t = DecodeRawTensor(DataType::kDouble, {2}, LittleEndian<double>({0.25, -1e300}));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<double>(*t), ElementsAre(0.25, -1e300));
  }
  {
    // 0x0102 little-endian is bytes 02 01.
    auto t = DecodeRawTensor(DataType::kInt16, {2}, std::string("\x02\x01\xff\xff", 4));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<int16_t>(*t), ElementsAre(0x0102, -1));
  }
  {
    auto t = DecodeRawTensor(DataType::kInt8, {3}, std::string("\x7f\x80\x00", 3));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<int8_t>(*t), ElementsAre(127, -128, 0));
  }
  {
    auto t = DecodeRawTensor(DataType::kUint8, {1, 2}, std::string("\xff\x01", 2));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<uint8_t>(*t), ElementsAre(255, 1));
  }
  {
    auto t = DecodeRawTensor(DataType::kUint16, {1}, std::string("\x34\x12", 2));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<uint16_t>(*t), ElementsAre(0x1234));
  }
  {
    auto t = DecodeRawTensor(DataType::kInt32, {2}, LittleEndian<int32_t>({-7, 1 << 30}));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<int32_t>(*t), ElementsAre(-7, 1 << 30));
  }
  {
    auto t = DecodeRawTensor(DataType::kUint32, {1}, std::string("\x78\x56\x34\x12", 4));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<uint32_t>(*t), ElementsAre(0x12345678u));
  }
  {
    auto t = DecodeRawTensor(DataType::kInt64, {1}, LittleEndian<int64_t>({-(int64_t{1} << 40)}));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<int64_t>(*t), ElementsAre(-(int64_t{1} << 40)));
  }
  {
    auto t =
        DecodeRawTensor(DataType::kUint64, {1}, std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<uint64_t>(*t), ElementsAre(0x0102030405060708ull));
  }
  {
    // FP16 1.0 is 0x3C00, BF16 1.0 is 0x3F80; both travel as 2 raw bytes.
    auto h = DecodeRawTensor(DataType::kFloat16, {1}, std::string("\x00\x3c", 2));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_THAT(Values<uint16_t>(*h), ElementsAre(0x3C00));
    auto b = DecodeRawTensor(DataType::kBFloat16, {2}, std::string("\x80\x3f\x00\xc0", 4));
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_THAT(Values<uint16_t>(*b), ElementsAre(0x3F80, 0xC000));
  }
  {
    // BOOL: one byte per element; any non-zero byte is true.
    auto t = DecodeRawTensor(DataType::kBool, {3}, std::string("\x01\x00\x05", 3));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Values<bool>(*t), ElementsAre(true, false, true));
  }
}

TEST(CodecTest, ViewsRawFixedSizeContentsWithoutCopying) {
  const std::string raw = LittleEndian<float>({1.5f, -2, 0, 8, 3, 4});
  auto owner = std::make_shared<int>(7);
  auto t = ViewRawTensor(DataType::kFloat, {3, 2}, raw, owner);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->raw(), static_cast<const void*>(raw.data()));  // the request's bytes, in place
  EXPECT_THAT(t->dims(), ElementsAre(3, 2));
  EXPECT_THAT(std::vector<float>(t->data<float>(), t->data<float>() + 6),
              ElementsAre(1.5f, -2, 0, 8, 3, 4));
  EXPECT_EQ(owner.use_count(), 2);  // the view holds the owner
  auto unowned = ViewRawTensor(DataType::kInt32, {1}, raw.substr(0, 4), nullptr);
  ASSERT_TRUE(unowned.ok()) << unowned.status();
  EXPECT_TRUE(unowned->is_view());
  // BOOL is canonicalised, so it is copied; sizes are checked as when decoding.
  const std::string bools("\x01\x00\x05", 3);
  auto b = ViewRawTensor(DataType::kBool, {3}, bools, nullptr);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(b->raw(), static_cast<const void*>(bools.data()));
  EXPECT_THAT(std::vector<uint8_t>(b->data<uint8_t>(), b->data<uint8_t>() + 3), ElementsAre(1, 0, 1));
  auto wrong = ViewRawTensor(DataType::kFloat, {2, 3}, std::string(20, '\0'), nullptr);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(), HasSubstr("expected 24 bytes"));
  EXPECT_THAT(wrong.status().message(), HasSubstr("received 20"));
}

TEST(CodecTest, DecodesRawBytes) {
  const std::string raw = std::string("\x03\x00\x00\x00", 4) + "abc" +
                          std::string("\x00\x00\x00\x00", 4) + std::string("\x02\x00\x00\x00", 4) +
                          std::string("\x00z", 2);
  auto t = DecodeRawTensor(DataType::kString, {3}, raw);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(Values<std::string>(*t), ElementsAre("abc", "", std::string("\x00z", 2)));
}

TEST(CodecTest, RawByteSizeMismatchSaysExpectedAndReceived) {
  // FP32 [2,3] needs 2*3*4 = 24 bytes.
  auto t = DecodeRawTensor(DataType::kFloat, {2, 3}, std::string(20, '\0'));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(),
              AllOf(HasSubstr("expected 24 bytes"), HasSubstr("FP32"), HasSubstr("received 20")));
  EXPECT_FALSE(DecodeRawTensor(DataType::kInt64, {2}, std::string(17, '\0')).ok());
  EXPECT_FALSE(DecodeRawTensor(DataType::kBool, {2}, std::string(1, '\1')).ok());
  EXPECT_FALSE(DecodeRawTensor(DataType::kFloat16, {3}, std::string(4, '\0')).ok());
}

TEST(CodecTest, MalformedRawBytesAreRejected) {
  // Too few elements: only one of two.
  auto short_count = DecodeRawTensor(DataType::kString, {2}, std::string("\x01\x00\x00\x00x", 5));
  ASSERT_FALSE(short_count.ok());
  EXPECT_THAT(short_count.status().message(), HasSubstr("after 1 of 2 elements"));
  // Length prefix past the end.
  auto overrun = DecodeRawTensor(DataType::kString, {1}, std::string("\x09\x00\x00\x00xy", 6));
  ASSERT_FALSE(overrun.ok());
  EXPECT_THAT(overrun.status().message(), HasSubstr("declares 9 bytes but only 2 remain"));
  // Trailing bytes.
  auto trailing = DecodeRawTensor(DataType::kString, {1}, std::string("\x01\x00\x00\x00xy", 6));
  ASSERT_FALSE(trailing.ok());
  EXPECT_THAT(trailing.status().message(), HasSubstr("1 bytes after the last"));
}

TEST(CodecTest, NegativeDimensionIsRejected) {
  auto t = DecodeRawTensor(DataType::kFloat, {-1, 4}, "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("negative dimension (dim 0 is -1)"));
}

TEST(CodecTest, ElementCountsAreCheckedForOverflow) {
  EXPECT_EQ(*CheckedNumElements({}), 1);
  EXPECT_EQ(*CheckedNumElements({3, 0, int64_t{1} << 62}), 0);
  EXPECT_EQ(*CheckedNumElements({int64_t{1} << 31, int64_t{1} << 31}), int64_t{1} << 62);
  // 2^32 * 2^32 = 2^64 does not fit; neither does 3 * 2^62.
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 32},
                                           std::vector<int64_t>{3, int64_t{1} << 62}}) {
    auto count = CheckedNumElements(dims);
    ASSERT_FALSE(count.ok());
    EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(count.status().message(), HasSubstr("overflows int64"));
  }
  // 2^61 doubles are 2^64 bytes: the element count fits, the byte size does not.
  auto bytes = DecodeRawTensor(DataType::kDouble, {int64_t{1} << 61}, "");
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(), HasSubstr("byte size overflows"));
}

TEST(CodecTest, HugeBytesShapeIsRefusedBeforeAllocating) {
  // 2^40 strings would take 32 TiB of std::string objects; the 4 bytes of raw
  // data hold one empty element, so this must fail on the layout, not allocate.
  auto t = DecodeRawTensor(DataType::kString, {int64_t{1} << 40}, std::string(4, '\0'));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("end after 1 of 1099511627776 elements"));
}

TEST(CodecTest, DecodesTypedContentsForEveryType) {
  inference::InferTensorContents c;
  c.add_fp32_contents(0.5f);
  c.add_fp32_contents(-3.0f);
  auto fp32 = DecodeTypedTensor(DataType::kFloat, {2}, c);
  ASSERT_TRUE(fp32.ok()) << fp32.status();
  EXPECT_THAT(Values<float>(*fp32), ElementsAre(0.5f, -3.0f));

  c.Clear();
  c.add_fp64_contents(2.25);
  auto fp64 = DecodeTypedTensor(DataType::kDouble, {1}, c);
  ASSERT_TRUE(fp64.ok());
  EXPECT_THAT(Values<double>(*fp64), ElementsAre(2.25));

  c.Clear();
  for (int v : {-128, 0, 127}) c.add_int_contents(v);
  auto i8 = DecodeTypedTensor(DataType::kInt8, {3}, c);
  ASSERT_TRUE(i8.ok()) << i8.status();
  EXPECT_THAT(Values<int8_t>(*i8), ElementsAre(-128, 0, 127));
  auto i16 = DecodeTypedTensor(DataType::kInt16, {3}, c);
  ASSERT_TRUE(i16.ok());
  EXPECT_THAT(Values<int16_t>(*i16), ElementsAre(-128, 0, 127));
  auto i32 = DecodeTypedTensor(DataType::kInt32, {1, 3}, c);
  ASSERT_TRUE(i32.ok());
  EXPECT_THAT(Values<int32_t>(*i32), ElementsAre(-128, 0, 127));

  c.Clear();
  c.add_int64_contents(int64_t{1} << 50);
  auto i64 = DecodeTypedTensor(DataType::kInt64, {1}, c);
  ASSERT_TRUE(i64.ok());
  EXPECT_THAT(Values<int64_t>(*i64), ElementsAre(int64_t{1} << 50));

  c.Clear();
  for (uint32_t v : {0u, 255u}) c.add_uint_contents(v);
  auto u8 = DecodeTypedTensor(DataType::kUint8, {2}, c);
  ASSERT_TRUE(u8.ok());
  EXPECT_THAT(Values<uint8_t>(*u8), ElementsAre(0, 255));
  auto u16 = DecodeTypedTensor(DataType::kUint16, {2}, c);
  ASSERT_TRUE(u16.ok());
  EXPECT_THAT(Values<uint16_t>(*u16), ElementsAre(0, 255));
  auto u32 = DecodeTypedTensor(DataType::kUint32, {2}, c);
  ASSERT_TRUE(u32.ok());
  EXPECT_THAT(Values<uint32_t>(*u32), ElementsAre(0u, 255u));

  c.Clear();
  c.add_uint64_contents(~uint64_t{0});
  auto u64 = DecodeTypedTensor(DataType::kUint64, {1}, c);
  ASSERT_TRUE(u64.ok());
  EXPECT_THAT(Values<uint64_t>(*u64), ElementsAre(~uint64_t{0}));

  c.Clear();
  c.add_bool_contents(true);
  c.add_bool_contents(false);
  auto b = DecodeTypedTensor(DataType::kBool, {2}, c);
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(Values<bool>(*b), ElementsAre(true, false));

  c.Clear();
  c.add_bytes_contents("hello");
  c.add_bytes_contents("");
  auto s = DecodeTypedTensor(DataType::kString, {2}, c);
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(Values<std::string>(*s), ElementsAre("hello", ""));
}

TEST(CodecTest, TypedContentsErrors) {
  inference::InferTensorContents c;
  c.add_fp32_contents(1.0f);
  auto count = DecodeTypedTensor(DataType::kFloat, {2}, c);
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(count.status().message(),
              AllOf(HasSubstr("expected 2 values in fp32_contents"), HasSubstr("received 1")));

  // The right field plus another one.
  c.add_fp32_contents(2.0f);
  c.add_int_contents(3);
  auto mixed = DecodeTypedTensor(DataType::kFloat, {2}, c);
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(),
              AllOf(HasSubstr("fp32_contents only"), HasSubstr("received values in int_contents")));

  // A field for another type.
  inference::InferTensorContents ints;
  ints.add_int_contents(1);
  auto wrong_field = DecodeTypedTensor(DataType::kFloat, {1}, ints);
  ASSERT_FALSE(wrong_field.ok());
  EXPECT_THAT(wrong_field.status().message(),
              HasSubstr("FP32 data must be in fp32_contents only; "
                        "received values in int_contents"));

  // Narrowing out of range.
  inference::InferTensorContents big;
  big.add_int_contents(128);
  auto range = DecodeTypedTensor(DataType::kInt8, {1}, big);
  ASSERT_FALSE(range.ok());
  EXPECT_THAT(range.status().message(), AllOf(HasSubstr("128"), HasSubstr("out of range")));
  inference::InferTensorContents big_u;
  big_u.add_uint_contents(70000);
  EXPECT_FALSE(DecodeTypedTensor(DataType::kUint16, {1}, big_u).ok());

  // FP16 / BF16 only as raw bytes.
  inference::InferTensorContents any;
  auto half = DecodeTypedTensor(DataType::kFloat16, {0}, any);
  ASSERT_FALSE(half.ok());
  EXPECT_THAT(half.status().message(), HasSubstr("FP16 data can only be sent in raw"));
  EXPECT_FALSE(DecodeTypedTensor(DataType::kBFloat16, {0}, any).ok());
}

TEST(CodecTest, HasTypedContents) {
  inference::InferTensorContents c;
  EXPECT_FALSE(HasTypedContents(c));
  c.add_bytes_contents("");
  EXPECT_TRUE(HasTypedContents(c));
}

TEST(CodecTest, EncodesRawOutputs) {
  onyx::Tensor f = onyx::Tensor::Allocate(DataType::kFloat, {2});
  f.mutable_data<float>()[0] = 1.5f;
  f.mutable_data<float>()[1] = -2.0f;
  std::string raw;
  ASSERT_TRUE(EncodeRawTensor(f, &raw).ok());
  EXPECT_EQ(raw, LittleEndian<float>({1.5f, -2.0f}));

  onyx::Tensor b = onyx::Tensor::Allocate(DataType::kBool, {3});
  b.mutable_data<bool>()[0] = true;
  b.mutable_data<bool>()[2] = true;
  std::string braw;
  ASSERT_TRUE(EncodeRawTensor(b, &braw).ok());
  EXPECT_EQ(braw, std::string("\x01\x00\x01", 3));

  onyx::Tensor s = onyx::Tensor::Allocate(DataType::kString, {2});
  s.mutable_data<std::string>()[0] = "hi";
  std::string sraw;
  ASSERT_TRUE(EncodeRawTensor(s, &sraw).ok());
  EXPECT_EQ(sraw, std::string("\x02\x00\x00\x00hi\x00\x00\x00\x00", 10));

  onyx::Tensor empty = onyx::Tensor::Allocate(DataType::kInt64, {0, 3});
  std::string eraw;
  ASSERT_TRUE(EncodeRawTensor(empty, &eraw).ok());
  EXPECT_EQ(eraw, "");
}

TEST(CodecTest, RawRoundTripsThroughEncode) {
  const std::string raw = LittleEndian<int32_t>({1, -2, 3, -4, 5, -6});
  auto t = DecodeRawTensor(DataType::kInt32, {3, 2}, raw);
  ASSERT_TRUE(t.ok());
  std::string back;
  ASSERT_TRUE(EncodeRawTensor(*t, &back).ok());
  EXPECT_EQ(back, raw);
}

}  // namespace
}  // namespace onyx::server
