// TestRegion (tests only): a POSIX shared-memory object of a given size,
// mapped for the test to fill and registered in a SharedMemoryRegistry under
// a name, as a client would set one up. Unmapped and unlinked on destruction.
//
//   TestRegion region("region", 256);
//   ASSERT_TRUE(region.ok());
//   std::memcpy(region.data() + 16, bytes, n);
//   ... registry() serves "region" ...
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <string>

#include "server/memory/shared_memory.h"

namespace onyx::server {

class TestRegion {
 public:
  TestRegion(const std::string& name, size_t size)
      : key_("/onyx_test_region_" + name + "_" + std::to_string(getpid())), size_(size) {
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, static_cast<off_t>(size)) == 0) {
      void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (mapping != MAP_FAILED) data_ = static_cast<char*>(mapping);
    }
    close(fd);
    if (data_ != nullptr) registered_ = registry_.Register(name, key_, 0, size).ok();
  }
  ~TestRegion() {
    if (data_ != nullptr) munmap(data_, size_);
    shm_unlink(key_.c_str());
  }
  TestRegion(const TestRegion&) = delete;
  TestRegion& operator=(const TestRegion&) = delete;

  bool ok() const { return registered_; }
  const std::string& key() const { return key_; }
  size_t size() const { return size_; }
  char* data() { return data_; }
  SharedMemoryRegistry& registry() { return registry_; }

 private:
  std::string key_;
  size_t size_;
  char* data_ = nullptr;
  bool registered_ = false;
  SharedMemoryRegistry registry_;
};

}  // namespace onyx::server
