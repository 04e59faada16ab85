#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/fuzz_target.h"

namespace onyx::fuzz {

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz target invariant broken: %s\n", what);
  std::abort();
}

namespace {
int64_t accepted = 0;
}  // namespace

void Accepted() { ++accepted; }
int64_t AcceptedCount() { return accepted; }

uint64_t ReadEveryByte(const onyx::Tensor& tensor) {
  uint64_t sum = 0;
  if (tensor.type() == onyx::DataType::kString) {
    const std::string* strings = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      for (char c : strings[i]) sum += static_cast<unsigned char>(c);
    }
    return sum;
  }
  const auto* bytes = static_cast<const unsigned char*>(tensor.raw());
  for (size_t i = 0; i < tensor.byte_size(); ++i) sum += bytes[i];
  return sum;
}

}  // namespace onyx::fuzz
