#include "planner/memory_pattern.h"

#include <random>

#include "gtest/gtest.h"

namespace onyx {
namespace {

void ExpectNoConflicts(const std::vector<BufferRequest>& requests, const MemoryPattern& p) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& a = requests[i];
    EXPECT_EQ(p.offset_of.at(a.id) % 64, 0u);
    EXPECT_LE(p.offset_of.at(a.id) + a.bytes, p.total_bytes);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      const auto& b = requests[j];
      bool live_together = a.first <= b.last && b.first <= a.last;
      if (!live_together) continue;
      size_t a0 = p.offset_of.at(a.id), a1 = a0 + a.bytes;
      size_t b0 = p.offset_of.at(b.id), b1 = b0 + b.bytes;
      EXPECT_TRUE(a1 <= b0 || b1 <= a0) << "buffers " << a.id << " and " << b.id << " overlap";
    }
  }
}

TEST(MemoryPatternTest, ChainReusesDeadBuffers) {
  // x0 -> x1 -> x2 -> x3: each buffer dies when the next one is written.
  std::vector<BufferRequest> chain = {{0, 1000, 0, 1}, {1, 1000, 1, 2}, {2, 1000, 2, 3}, {3, 1000, 3, 4}};
  MemoryPattern p = PlanMemoryPattern(chain);
  ExpectNoConflicts(chain, p);
  EXPECT_EQ(p.total_bytes, 2 * 1024u);  // two live at a time, 64-byte aligned
  EXPECT_EQ(TotalWithoutReuse(chain), 4 * 1024u);
}

TEST(MemoryPatternTest, RandomLifetimesNeverOverlapAndNeverExceedTheSum) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferRequest> requests;
    int n = 1 + rng() % 40;
    for (int i = 0; i < n; ++i) {
      int first = rng() % 30;
      requests.push_back({i, 1 + rng() % 5000, first, first + static_cast<int>(rng() % 10)});
    }
    MemoryPattern p = PlanMemoryPattern(requests);
    ExpectNoConflicts(requests, p);
    EXPECT_LE(p.total_bytes, TotalWithoutReuse(requests));
    // Never below the peak of simultaneously live bytes.
    size_t peak = 0;
    for (int t = 0; t < 40; ++t) {
      size_t live = 0;
      for (const auto& r : requests) {
        if (r.first <= t && t <= r.last) live += (r.bytes + 63) / 64 * 64;
      }
      peak = std::max(peak, live);
    }
    EXPECT_GE(p.total_bytes, peak);
  }
}

}  // namespace
}  // namespace onyx
