#include "providers/cuda/cuda_options.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

constexpr char kKnown[] = "device_id, tf32, cuda_graph, gpu_mem_limit";

absl::Status BadValue(const std::string& key, const char* expected, const std::string& value) {
  return absl::InvalidArgumentError(
      absl::StrCat("execution provider 'cuda': option ", key, " expects ", expected, ", received '", value, "'"));
}

absl::StatusOr<bool> ParseFlag(const std::string& key, const std::string& value) {
  if (value == "0") return false;
  if (value == "1") return true;
  return BadValue(key, "0 or 1", value);
}

}  // namespace

absl::StatusOr<CudaProviderOptions> ParseCudaProviderOptions(const ProviderOptions& options) {
  CudaProviderOptions out;
  for (const auto& [key, value] : options.settings) {
    if (key == "device_id") {
      int id = 0;
      if (!absl::SimpleAtoi(value, &id) || id < 0) return BadValue(key, "a non-negative device ordinal", value);
      out.device_id = id;
    } else if (key == "tf32") {
      absl::StatusOr<bool> flag = ParseFlag(key, value);
      if (!flag.ok()) return flag.status();
      out.tf32 = *flag;
    } else if (key == "cuda_graph") {
      absl::StatusOr<bool> flag = ParseFlag(key, value);
      if (!flag.ok()) return flag.status();
      out.cuda_graph = *flag;
    } else if (key == "gpu_mem_limit") {
      uint64_t bytes = 0;
      if (!absl::SimpleAtoi(value, &bytes)) return BadValue(key, "a non-negative number of bytes", value);
      out.gpu_mem_limit = static_cast<size_t>(bytes);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("execution provider 'cuda' has no option '", key, "' (known: ", kKnown, ")"));
    }
  }
  return out;
}

}  // namespace onyx
