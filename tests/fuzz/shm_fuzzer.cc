// The shared-memory region arithmetic: registering a range of a 4096-byte
// object, parsing a tensor's shared-memory parameters, and reading, slicing
// and writing ranges of the region — offsets and sizes from the input, chosen
// to reach past the ends and around 2^64. Whatever succeeds must stay inside
// the object, and a read must return the bytes that are there.
#include <cstring>
#include <string>

#include "server/grpc/shared_memory_io.h"
#include "server/memory/test_region.h"
#include "tests/fuzz/byte_reader.h"
#include "tests/fuzz/fuzz_target.h"

namespace onyx::fuzz {
namespace {

constexpr uint64_t kObjectBytes = 4096;

server::TestRegion& Object() {
  static auto* object = [] {
    auto* r = new server::TestRegion("fuzz_shm", kObjectBytes);
    Require(r->ok(), "cannot create the shared-memory object");
    for (uint64_t i = 0; i < kObjectBytes; ++i) r->data()[i] = static_cast<char>(i * 7);
    return r;
  }();
  return *object;
}

// An offset or size: small, near the object's size, or anywhere in uint64.
uint64_t TakeRange(ByteReader& reader) {
  const uint8_t kind = reader.Take<uint8_t>();
  const uint64_t value = reader.Take<uint64_t>();
  switch (kind % 4) {
    case 0: return value % 64;
    case 1: return kObjectBytes - 32 + value % 64;
    case 2: return ~uint64_t{0} - value % 64;
    default: return value;
  }
}

// One shared-memory parameter as a client may send it: int64, uint64, a
// string, a bool, or absent.
void SetParameter(ByteReader& reader, const char* key, uint64_t value,
                  google::protobuf::Map<std::string, inference::InferParameter>& params) {
  switch (reader.Take<uint8_t>() % 5) {
    case 0: params[key].set_int64_param(static_cast<int64_t>(value)); break;
    case 1: params[key].set_uint64_param(value); break;
    case 2: params[key].set_string_param(std::to_string(value)); break;
    case 3: params[key].set_bool_param(value & 1); break;
    default: break;
  }
}

}  // namespace
}  // namespace onyx::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onyx::fuzz;  // NOLINT: the target's own namespace
  ByteReader reader(data, size);
  const uint64_t reg_offset = TakeRange(reader), reg_size = TakeRange(reader);
  onyx::server::SharedMemoryRegistry registry;
  const absl::Status registered = registry.Register("r", Object().key(), reg_offset, reg_size);
  const bool fits = reg_size > 0 && reg_offset <= kObjectBytes && reg_size <= kObjectBytes - reg_offset;
  Require(registered.ok() == fits, "Register's verdict differs from [offset, offset + size) within the object");
  if (!registered.ok()) return 0;

  google::protobuf::Map<std::string, inference::InferParameter> params;
  const uint8_t region_choice = reader.Take<uint8_t>();
  if (region_choice % 4 != 3) params["shared_memory_region"].set_string_param(region_choice % 4 == 0 ? "r" : "x");
  const uint64_t offset = TakeRange(reader), byte_size = TakeRange(reader);
  SetParameter(reader, "shared_memory_offset", offset, params);
  SetParameter(reader, "shared_memory_byte_size", byte_size, params);
  auto ref = onyx::server::ParseSharedMemoryRef(params);
  if (!ref.ok() || !ref->has_value()) return 0;
  auto bytes = onyx::server::ReadSharedMemory(**ref, registry);
  const onyx::server::SharedMemoryRef& r = **ref;
  if (bytes.ok()) {
    Accepted();
    Require(r.region == "r", "a read from a region never registered");
    Require(r.offset <= reg_size && r.byte_size <= reg_size - r.offset, "a read past the region's end");
    Require(bytes->size() == r.byte_size, "a read of another size than asked");
    Require(std::memcmp(bytes->data(), Object().data() + reg_offset + r.offset, r.byte_size) == 0,
            "a read returned other bytes than the region holds");
  }
  auto region = registry.Get("r");
  Require(region.ok(), "the registered region is gone");
  auto slice = (*region)->Slice(r.offset, r.byte_size);
  Require(slice.ok() == (r.offset <= reg_size && r.byte_size <= reg_size - r.offset),
          "Slice's verdict differs from the range within the region");
  if (slice.ok() && !slice->empty()) {
    std::string copy(slice->size(), '\0');
    Require((*region)->WriteFrom(r.offset, copy.data(), copy.size()).ok(), "WriteFrom refused a valid range");
    // Restore the pattern for the next input.
    for (uint64_t i = 0; i < slice->size(); ++i) {
      (*slice)[i] = static_cast<uint8_t>((reg_offset + r.offset + i) * 7);
    }
  }
  return 0;
}
