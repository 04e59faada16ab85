// Histogram: a fixed-memory, log-linear latency histogram (HDR-style).
//
//   Histogram h;                       // ~270 KB, allocated once
//   h.Record(1'234'567);               // nanoseconds; no allocation
//   h.Percentile(0.99);                // within 0.05% of the exact value
//   total.Merge(h); h.Reset();         // per-thread windows folded into a total
//
// Values are nanoseconds. Below 2048 ns every value has its own bucket; above,
// each power of two is split into 1024 equal buckets, so a bucket is at most
// 1/1024 of its values wide (3 significant decimal digits) up to 2^42 ns
// (73 min, past the 1 h the tool promises). Larger values land in the last
// bucket; min and max are kept exactly. Percentiles use the nearest rank and
// report the bucket's midpoint, clamped to [min, max].
//
// Thread-compatible: one writer at a time; callers serialise Merge/Reset.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace onyx::load {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 11;                                // 2048 linear buckets
  static constexpr int kHalf = 1 << (kSubBucketBits - 1);                  // 1024 per power of two
  static constexpr int kMaxExponent = 31;                                  // up to 2^42 ns
  static constexpr int kBucketCount = kHalf * (kMaxExponent + 1) + kHalf;  // 33792

  Histogram();

  void Record(int64_t ns) { RecordN(ns, 1); }
  // Adds `n` samples of value `ns` (negative values count as 0).
  void RecordN(int64_t ns, int64_t n);
  // Adds every sample of `other`.
  void Merge(const Histogram& other);
  // Forgets every sample (cost proportional to the buckets in use).
  void Reset();

  int64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double sum() const { return sum_; }

  // Nearest-rank percentile, q in [0, 1]; 0 when empty. q = 1 is the exact max.
  int64_t Percentile(double q) const;
  // Samples at or below `ns`, as a share of all (0 when empty).
  double ShareAtOrBelow(int64_t ns) const;

  // Bucket layout, exposed for serialisation and tests.
  static int IndexOf(int64_t ns);
  static int64_t LowerBound(int index);  // smallest value of the bucket
  static int64_t Width(int index);       // values per bucket

  // Non-empty buckets as (index, count), ascending; and back. FromSparse
  // restores count and the bucket contents; min/max/sum are given separately
  // because buckets alone cannot hold them exactly.
  std::vector<std::pair<int, int64_t>> Sparse() const;
  void AddSparse(const std::vector<std::pair<int, int64_t>>& buckets, int64_t min, int64_t max, double sum);

 private:
  std::vector<int64_t> counts_;
  int64_t count_ = 0;
  int64_t min_ = 0, max_ = 0;
  double sum_ = 0;
  int low_index_ = kBucketCount, high_index_ = -1;  // range of buckets in use
};

}  // namespace onyx::load
