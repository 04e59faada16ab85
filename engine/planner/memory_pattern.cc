#include "planner/memory_pattern.h"

#include <algorithm>

namespace onyx {
namespace {

size_t Align(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

MemoryPattern PlanMemoryPattern(const std::vector<BufferRequest>& requests) {
  // Largest first, then earliest: big buffers claim low offsets, small ones
  // fill the gaps between lifetimes (greedy best fit in the offset dimension).
  std::vector<const BufferRequest*> order;
  for (const auto& r : requests) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const BufferRequest* a, const BufferRequest* b) {
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    return a->first < b->first;
  });
  struct Placed {
    size_t offset, bytes;
    int first, last;
  };
  std::vector<Placed> placed;
  MemoryPattern pattern;
  for (const BufferRequest* r : order) {
    const size_t bytes = Align(std::max<size_t>(r->bytes, 1));
    // Intervals already taken by buffers alive at the same time, by offset.
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Placed& p : placed) {
      if (p.first <= r->last && r->first <= p.last) busy.emplace_back(p.offset, p.offset + p.bytes);
    }
    std::sort(busy.begin(), busy.end());
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const auto& [begin, end] : busy) {
      if (begin >= cursor + bytes && begin - cursor < best_gap) {
        best = cursor;
        best_gap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best == SIZE_MAX) best = cursor;
    placed.push_back({best, bytes, r->first, r->last});
    pattern.offset_of[r->id] = best;
    pattern.bytes_of[r->id] = bytes;
    pattern.total_bytes = std::max(pattern.total_bytes, best + bytes);
  }
  return pattern;
}

size_t TotalWithoutReuse(const std::vector<BufferRequest>& requests) {
  size_t total = 0;
  for (const auto& r : requests) total += Align(std::max<size_t>(r.bytes, 1));
  return total;
}

}  // namespace onyx
