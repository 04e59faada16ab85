// Heap helpers for tests of how the C library's heap gives memory back
// (tests only): whether a sanitizer replaced the allocator, the process's
// resident bytes, and resident blocks, some freed between live ones.
//
//   #if defined(ONYX_SANITIZED_HEAP) || !defined(__GLIBC__)
//     GTEST_SKIP() << ...;
//   #endif
//   std::vector<char*> blocks = FillResidentBlocks(16384, 4000);  // ~64 MB
//   const int64_t before = ResidentBytes();
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ONYX_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ONYX_SANITIZED_HEAP 1
#endif
#endif

namespace onyx::server {

inline int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// `count` malloc'd blocks of `size` bytes, each written so it is resident.
inline std::vector<char*> FillResidentBlocks(size_t count, size_t size) {
  std::vector<char*> blocks(count);
  for (char*& block : blocks) {
    block = static_cast<char*>(std::malloc(size));
    std::memset(block, 1, size);
  }
  return blocks;
}

// What an unload leaves behind, on the calling thread's arena: FillResidentBlocks,
// then all but a block in 512 freed. The survivors (the last one among them)
// keep the C library from shrinking the arena from its top, so the freed
// pages stay resident; they are returned for the caller to free.
inline std::vector<char*> StrandResidentBlocks(size_t count, size_t size) {
  std::vector<char*> blocks = FillResidentBlocks(count, size);
  std::vector<char*> survivors;
  for (size_t i = 0; i < count; ++i) {
    if (i % 512 == 511) {
      survivors.push_back(blocks[i]);
    } else {
      std::free(blocks[i]);
    }
  }
  return survivors;
}

}  // namespace onyx::server
