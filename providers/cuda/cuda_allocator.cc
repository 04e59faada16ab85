#include "providers/cuda/cuda_allocator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace onyx {
namespace {

// IAllocator promises a unique pointer for 0 bytes; cudaMalloc(0) gives null.
size_t AtLeastOne(size_t bytes) { return std::max<size_t>(bytes, 1); }

}  // namespace

DeviceAllocator::DeviceAllocator(std::shared_ptr<DeviceRuntime> runtime, int ordinal)
    : runtime_(std::move(runtime)), ordinal_(ordinal), label_(absl::StrCat("cuda:", ordinal)) {}

absl::StatusOr<void*> DeviceAllocator::Allocate(size_t bytes) {
  ScopedDevice device(*runtime_, ordinal_);
  if (!device.status().ok()) return device.status();
  absl::StatusOr<void*> p = runtime_->DeviceMalloc(AtLeastOne(bytes));
  if (!p.ok()) {
    return absl::Status(p.status().code(), absl::StrCat(label_, ": ", p.status().message()));
  }
  absl::MutexLock lock(&mu_);
  sizes_[*p] = bytes;
  counters_.allocations++;
  counters_.bytes_in_use += static_cast<int64_t>(bytes);
  return p;
}

void DeviceAllocator::Free(void* p) {
  if (p == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    auto it = sizes_.find(p);
    if (it != sizes_.end()) {
      counters_.bytes_in_use -= static_cast<int64_t>(it->second);
      sizes_.erase(it);
    }
    counters_.frees++;
  }
  ScopedDevice device(*runtime_, ordinal_);
  absl::Status status = device.status().ok() ? runtime_->DeviceFree(p) : device.status();
  if (!status.ok()) EngineLogger()->warn("{}: freeing device memory failed: {}", label_, status.ToString());
}

AllocatorCounters DeviceAllocator::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

PinnedHostAllocator::PinnedHostAllocator(std::shared_ptr<DeviceRuntime> runtime) : runtime_(std::move(runtime)) {}

absl::StatusOr<void*> PinnedHostAllocator::Allocate(size_t bytes) {
  absl::StatusOr<void*> p = runtime_->PinnedHostMalloc(AtLeastOne(bytes));
  if (!p.ok()) return p.status();
  absl::MutexLock lock(&mu_);
  sizes_[*p] = bytes;
  counters_.allocations++;
  counters_.bytes_in_use += static_cast<int64_t>(bytes);
  return p;
}

void PinnedHostAllocator::Free(void* p) {
  if (p == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    auto it = sizes_.find(p);
    if (it != sizes_.end()) {
      counters_.bytes_in_use -= static_cast<int64_t>(it->second);
      sizes_.erase(it);
    }
    counters_.frees++;
  }
  absl::Status status = runtime_->PinnedHostFree(p);
  if (!status.ok()) EngineLogger()->warn("cuda_pinned: freeing pinned memory failed: {}", status.ToString());
}

AllocatorCounters PinnedHostAllocator::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

std::shared_ptr<BFCArena> MakeOwningArena(std::shared_ptr<IAllocator> allocator, BFCArena::Options options) {
  BFCArena* arena = new BFCArena(allocator.get(), std::move(options));
  // Constructed from the raw pointer, so the arena's weak self-reference is
  // set (OwnChunk); the deleter holds the allocator until the arena is gone.
  return std::shared_ptr<BFCArena>(arena, [allocator](BFCArena* a) { delete a; });
}

}  // namespace onyx
