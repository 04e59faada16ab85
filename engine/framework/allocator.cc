#include "framework/allocator.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace onyx {

absl::StatusOr<void*> CpuAllocator::Allocate(size_t bytes) {
  size_t rounded = ((bytes + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("cpu allocator: cannot allocate ", bytes, " bytes"));
  }
  return p;
}

void CpuAllocator::Free(void* p) { std::free(p); }

CpuAllocator* CpuAllocator::Default() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

}  // namespace onyx
