// A POSIX shared-memory region onyx-load creates for --shm system: the
// inputs of every request variant are written into it once, and the server
// reads them from there (SystemSharedMemoryRegister).
//
//   ASSIGN_OR_RETURN(auto region, ShmRegion::Create("/onyx_load_123_0", bytes));
//   std::memcpy(region->data() + offset, raw.data(), raw.size());
//
// The region is unmapped and unlinked when destroyed. Thread-compatible.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace onyx::load {

class ShmRegion {
 public:
  // `key` starts with '/'. INTERNAL naming the key and errno text on failure.
  static absl::StatusOr<std::unique_ptr<ShmRegion>> Create(std::string key, size_t size);
  ~ShmRegion();
  ShmRegion(const ShmRegion&) = delete;
  ShmRegion& operator=(const ShmRegion&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& key() const { return key_; }

 private:
  ShmRegion(std::string key, char* data, size_t size) : key_(std::move(key)), data_(data), size_(size) {}
  std::string key_;
  char* data_;
  size_t size_;
};

}  // namespace onyx::load
