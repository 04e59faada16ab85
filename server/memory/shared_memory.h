// SharedMemoryRegistry: named POSIX shared-memory regions a client registered
// (Triton's system shared memory extension).
//
//   SharedMemoryRegistry registry;
//   RETURN_IF_ERROR(registry.Register("in0", "/my_key", /*offset=*/0, /*byte_size=*/64));
//   ASSIGN_OR_RETURN(std::shared_ptr<SharedMemoryRegion> region, registry.Get("in0"));
//   ASSIGN_OR_RETURN(absl::Span<uint8_t> bytes, region->Slice(16, 48));
//
// Register shm_open()s the key read-write and maps [offset, offset + byte_size).
// Regions are reference counted: unregistering one while a request reads it
// keeps the mapping alive until that request lets go.
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace onyx::server {

struct SharedMemoryInfo {
  std::string name;
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

// One mapped region. Thread-compatible: concurrent requests may read and write
// it; keeping them apart is the client's business, as in Triton.
class SharedMemoryRegion {
 public:
  ~SharedMemoryRegion();
  const SharedMemoryInfo& info() const { return info_; }
  // Bytes [offset, offset + size) of the region (offset is relative to the
  // registered offset). INVALID_ARGUMENT when that range leaves the region.
  absl::StatusOr<absl::Span<uint8_t>> Slice(uint64_t offset, uint64_t size) const;
  // Copy bytes [offset, offset + size) of the region to `dst`, or `src` into
  // them, with Slice's range check. The owner may shrink the object after
  // registering it, and touching the pages past its new end raises SIGBUS:
  // these copies catch it (a process-wide SIGBUS handler that only acts on a
  // thread inside one of them) and return INVALID_ARGUMENT naming the region.
  absl::Status ReadInto(uint64_t offset, uint64_t size, void* dst) const;
  absl::Status WriteFrom(uint64_t offset, const void* src, uint64_t size) const;

 private:
  friend class SharedMemoryRegistry;
  SharedMemoryRegion(SharedMemoryInfo info, void* mapping, uint64_t mapped_size);
  const SharedMemoryInfo info_;
  void* const mapping_;  // start of the mapping (page aligned, before offset)
  const uint64_t mapped_size_;
};

class SharedMemoryRegistry {
 public:
  // Errors: INVALID_ARGUMENT for an empty name or key or a zero byte_size;
  // ALREADY_EXISTS when `name` is registered; NOT_FOUND (naming the key) when
  // the key cannot be opened; INVALID_ARGUMENT when [offset, offset+byte_size)
  // exceeds the object's size. A key without a leading '/' gets one.
  absl::Status Register(const std::string& name, const std::string& key, uint64_t offset,
                        uint64_t byte_size);
  // Forgets `name` ("" = every region). NOT_FOUND for an unknown name.
  absl::Status Unregister(absl::string_view name);
  // NOT_FOUND (naming the region) for an unknown name.
  absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> Get(absl::string_view name) const;
  // `name` ("" = all, sorted by name). NOT_FOUND for an unknown name.
  absl::StatusOr<std::vector<SharedMemoryInfo>> Status(absl::string_view name) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<const SharedMemoryRegion>, std::less<>> regions_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server
