// Memory patterns: packing buffers with known sizes and lifetimes into one
// block, so a run reserves a single arena chunk and every intermediate gets a
// fixed offset in it.
//
//   std::vector<BufferRequest> requests = {{.id = 3, .bytes = 4096, .first = 0, .last = 2}, ...};
//   MemoryPattern pattern = PlanMemoryPattern(requests);
//   char* x = block + pattern.offset_of[3];
//
// Two buffers may share bytes only when their lifetimes [first, last] (node
// positions in execution order) are disjoint. Pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace onyx {

struct BufferRequest {
  int id = 0;          // caller's key (a value slot)
  size_t bytes = 0;
  int first = 0;       // node position that writes it
  int last = 0;        // last node position that reads it (inclusive)
};

struct MemoryPattern {
  size_t total_bytes = 0;
  std::map<int, size_t> offset_of;  // id -> offset, 64-byte aligned
  std::map<int, size_t> bytes_of;   // id -> reserved bytes
};

MemoryPattern PlanMemoryPattern(const std::vector<BufferRequest>& requests);

// Sum of all request sizes (what the buffers take without any reuse).
size_t TotalWithoutReuse(const std::vector<BufferRequest>& requests);

}  // namespace onyx
