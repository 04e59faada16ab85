#include "loadtest/result.h"

namespace onyx::load {

HistogramData HistogramData::From(const Histogram& h) {
  HistogramData d;
  d.buckets = h.Sparse();
  d.count = h.count();
  d.min = h.min();
  d.max = h.max();
  d.sum = h.sum();
  return d;
}

Histogram HistogramData::Build() const {
  Histogram h;
  h.AddSparse(buckets, min, max, sum);
  return h;
}

double ModelLevelResult::error_share() const {
  const int64_t denominator = intended > 0 ? intended : ok + failed + dropped;
  return denominator > 0 ? static_cast<double>(failed + dropped) / static_cast<double>(denominator) : 0;
}

}  // namespace onyx::load
