// The CUDA provider's memory: DeviceAllocator hands out device memory of one
// device, PinnedHostAllocator page-locked host memory for staging copies.
// Both go to the DeviceRuntime on every call; the provider puts a BFCArena
// over each (MakeOwningArena), so that a warm workload that asks for the same
// sizes again performs no device allocation at all.
//
//   auto device = std::make_shared<DeviceAllocator>(runtime, 0);
//   std::shared_ptr<BFCArena> arena = MakeOwningArena(device, {.max_bytes = limit, .name = "cuda:0"});
//   RegisterDeviceArena("cuda:0", "session-1", arena);   // listed in the engine's arena metrics
//   ... after warm-up: device->counters().allocations stays put ...
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "framework/allocator.h"
#include "framework/bfc_arena.h"
#include "providers/cuda/device_runtime.h"

namespace onyx {

// Calls to the runtime made by an allocator, and what is outstanding.
struct AllocatorCounters {
  int64_t allocations = 0;  // successful Allocate calls
  int64_t frees = 0;
  int64_t bytes_in_use = 0;  // requested bytes not yet freed
};

// Device memory of device `ordinal` (cudaMalloc). Device "cuda:<ordinal>";
// not host accessible, so the execution frame does not zero-fill outputs in
// it: kernels allocate with OutputForOverwrite and clear on the device when
// they need zeros. Each call makes the device current for its duration.
class DeviceAllocator final : public IAllocator {
 public:
  DeviceAllocator(std::shared_ptr<DeviceRuntime> runtime, int ordinal);
  // RESOURCE_EXHAUSTED when the device is out of memory.
  absl::StatusOr<void*> Allocate(size_t bytes) override;
  // A runtime error is logged; the memory is forgotten either way.
  void Free(void* p) override;
  const char* device() const override { return label_.c_str(); }
  bool host_accessible() const override { return false; }
  AllocatorCounters counters() const;

 private:
  const std::shared_ptr<DeviceRuntime> runtime_;
  const int ordinal_;
  const std::string label_;
  mutable absl::Mutex mu_;
  std::map<void*, size_t> sizes_ ABSL_GUARDED_BY(mu_);
  AllocatorCounters counters_ ABSL_GUARDED_BY(mu_);
};

// Page-locked host memory (cudaHostAlloc, portable to every device). Device
// "cuda_pinned"; host accessible.
class PinnedHostAllocator final : public IAllocator {
 public:
  explicit PinnedHostAllocator(std::shared_ptr<DeviceRuntime> runtime);
  absl::StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* p) override;
  const char* device() const override { return "cuda_pinned"; }
  AllocatorCounters counters() const;

 private:
  const std::shared_ptr<DeviceRuntime> runtime_;
  mutable absl::Mutex mu_;
  std::map<void*, size_t> sizes_ ABSL_GUARDED_BY(mu_);
  AllocatorCounters counters_ ABSL_GUARDED_BY(mu_);
};

// A BFCArena over `allocator`, owned by a shared_ptr (so OwnChunk's tensors
// keep it alive) that also keeps the allocator alive until the arena is gone.
std::shared_ptr<BFCArena> MakeOwningArena(std::shared_ptr<IAllocator> allocator, BFCArena::Options options);

}  // namespace onyx
