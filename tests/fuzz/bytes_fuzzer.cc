// BYTES tensor decoding (server/grpc/codec.h): the first byte is the element
// count, the rest one raw_input_contents entry (a 4-byte little-endian length
// before each element). A decoded tensor must encode back to exactly the bytes
// it came from, through both the copying and the viewing decoder.
#include <string>

#include "server/grpc/codec.h"
#include "tests/fuzz/byte_reader.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using onyx::fuzz::Require;
  onyx::fuzz::ByteReader reader(data, size);
  const int64_t count = reader.Take<uint8_t>();
  const std::string raw(reader.Rest());
  const int64_t dims[] = {count};
  auto decoded = onyx::server::DecodeRawTensor(onyx::DataType::kString, dims, raw);
  auto viewed = onyx::server::ViewRawTensor(onyx::DataType::kString, dims, raw, nullptr);
  Require(decoded.ok() == viewed.ok(), "the copying and viewing decoders disagree");
  if (!decoded.ok()) {
    Require(decoded.status().message() == viewed.status().message(), "the two decoders refuse differently");
    return 0;
  }
  Require(decoded->num_elements() == count, "a decoded tensor of another element count");
  for (const auto* tensor : {&*decoded, &*viewed}) {
    onyx::fuzz::ReadEveryByte(*tensor);
    std::string encoded;
    Require(onyx::server::EncodeRawTensor(*tensor, &encoded).ok(), "a decoded tensor does not encode");
    Require(encoded == raw, "encode(decode(raw)) differs from raw");
  }
  onyx::fuzz::Accepted();
  return 0;
}
