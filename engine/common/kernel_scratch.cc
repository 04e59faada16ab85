#include "common/kernel_scratch.h"

#include <cstdlib>
#include <memory>

namespace onyx {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct Slot {
  std::unique_ptr<void, FreeDeleter> data;
  size_t bytes = 0;
};

thread_local Slot slots[kScratchSlots];

}  // namespace

void* KernelScratchBytes(ScratchSlot slot, size_t bytes) {
  Slot& s = slots[slot];
  if (bytes == 0) bytes = 1;  // empty tensors still get a valid pointer
  if (bytes > s.bytes) {
    // Grow by at least half again, so that slowly rising sizes (bucket by
    // bucket) settle after a few runs.
    size_t grown = bytes > s.bytes + s.bytes / 2 ? bytes : s.bytes + s.bytes / 2;
    grown = (grown + 63) / 64 * 64;
    s.data.reset();
    s.data.reset(std::aligned_alloc(64, grown));
    s.bytes = s.data ? grown : 0;
  }
  return s.data.get();
}

size_t KernelScratchHeldBytes() {
  size_t total = 0;
  for (const Slot& s : slots) total += s.bytes;
  return total;
}

}  // namespace onyx
