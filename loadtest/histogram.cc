#include "loadtest/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace onyx::load {

Histogram::Histogram() : counts_(kBucketCount, 0) {}

int Histogram::IndexOf(int64_t ns) {
  if (ns < 2 * kHalf) return static_cast<int>(std::max<int64_t>(ns, 0));
  // ns in [2^(10+b), 2^(11+b)): b-th power of two above the linear range,
  // split into 1024 buckets of width 2^b. Index = 1024*b + (ns >> b).
  const int top_bit = 63 - std::countl_zero(static_cast<uint64_t>(ns));
  const int b = top_bit - (kSubBucketBits - 1);
  if (b > kMaxExponent) return kBucketCount - 1;
  return kHalf * b + static_cast<int>(ns >> b);
}

int64_t Histogram::LowerBound(int index) {
  if (index < 2 * kHalf) return index;
  const int b = index / kHalf - 1;
  const int64_t sub = index - kHalf * b;  // in [1024, 2048)
  return sub << b;
}

int64_t Histogram::Width(int index) { return index < 2 * kHalf ? 1 : int64_t{1} << (index / kHalf - 1); }

void Histogram::RecordN(int64_t ns, int64_t n) {
  if (n <= 0) return;
  ns = std::max<int64_t>(ns, 0);
  const int i = IndexOf(ns);
  counts_[i] += n;
  low_index_ = std::min(low_index_, i);
  high_index_ = std::max(high_index_, i);
  if (count_ == 0) {
    min_ = max_ = ns;
  } else {
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }
  count_ += n;
  sum_ += static_cast<double>(ns) * static_cast<double>(n);
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) return;
  for (int i = other.low_index_; i <= other.high_index_; ++i) counts_[i] += other.counts_[i];
  low_index_ = std::min(low_index_, other.low_index_);
  high_index_ = std::max(high_index_, other.high_index_);
  min_ = count_ ? std::min(min_, other.min_) : other.min_;
  max_ = count_ ? std::max(max_, other.max_) : other.max_;
  count_ += other.count_;
  sum_ += other.sum_;
}

void Histogram::Reset() {
  if (high_index_ >= low_index_) {
    std::memset(counts_.data() + low_index_, 0, sizeof(int64_t) * (high_index_ - low_index_ + 1));
  }
  count_ = 0;
  min_ = max_ = 0;
  sum_ = 0;
  low_index_ = kBucketCount;
  high_index_ = -1;
}

int64_t Histogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  if (q >= 1) return max_;
  if (q <= 0) return min_;
  // Nearest rank: the smallest value with at least ceil(q * n) samples at or below it.
  const double exact_rank = q * static_cast<double>(count_);
  int64_t rank = static_cast<int64_t>(std::ceil(exact_rank - 1e-9));
  rank = std::clamp<int64_t>(rank, 1, count_);
  int64_t seen = 0;
  for (int i = low_index_; i <= high_index_; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const int64_t mid = LowerBound(i) + (Width(i) - 1) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

double Histogram::ShareAtOrBelow(int64_t ns) const {
  if (count_ == 0) return 0;
  if (ns >= max_) return 1;
  const int limit = IndexOf(ns);
  int64_t seen = 0;
  for (int i = low_index_; i <= std::min(limit, high_index_); ++i) seen += counts_[i];
  return static_cast<double>(seen) / static_cast<double>(count_);
}

std::vector<std::pair<int, int64_t>> Histogram::Sparse() const {
  std::vector<std::pair<int, int64_t>> out;
  for (int i = low_index_; i <= high_index_; ++i) {
    if (counts_[i] != 0) out.emplace_back(i, counts_[i]);
  }
  return out;
}

void Histogram::AddSparse(const std::vector<std::pair<int, int64_t>>& buckets, int64_t min, int64_t max, double sum) {
  int64_t added = 0;
  for (const auto& [index, n] : buckets) {
    if (index < 0 || index >= kBucketCount || n <= 0) continue;
    counts_[index] += n;
    low_index_ = std::min(low_index_, index);
    high_index_ = std::max(high_index_, index);
    added += n;
  }
  if (added == 0) return;
  min_ = count_ ? std::min(min_, min) : min;
  max_ = count_ ? std::max(max_, max) : max;
  count_ += added;
  sum_ += sum;
}

}  // namespace onyx::load
