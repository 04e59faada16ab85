// IAllocator: where a device's memory comes from. The BFC arena sits on top of
// one and is itself an IAllocator. Implementations are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace onyx {

class IAllocator {
 public:
  virtual ~IAllocator() = default;
  // `bytes` of memory aligned to 64 bytes; RESOURCE_EXHAUSTED when none is left.
  // Allocating 0 bytes returns a valid, unique pointer.
  virtual absl::StatusOr<void*> Allocate(size_t bytes) = 0;
  virtual void Free(void* p) = 0;
  virtual const char* device() const = 0;
  // Whether the host may read and write this memory directly. The execution
  // frame zero-fills outputs (OpKernelContext::Output) only in memory it can
  // touch; a device kernel allocates with OutputForOverwrite.
  virtual bool host_accessible() const { return true; }
};

// Host memory from the C heap, 64-byte aligned.
class CpuAllocator final : public IAllocator {
 public:
  absl::StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* p) override;
  const char* device() const override { return "cpu"; }
  // The process-wide instance.
  static CpuAllocator* Default();
};

}  // namespace onyx
