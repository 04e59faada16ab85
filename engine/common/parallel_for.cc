#include "common/parallel_for.h"

#include <omp.h>

#include <algorithm>

#include "common/cpu_quota.h"

namespace onyx {
namespace {

int CpuQuotaThreads() {
  static const int threads = AvailableCpuCount();
  return threads;
}

thread_local int scoped_threads = 0;  // 0: the CPU quota

}  // namespace

int IntraOpThreads() {
  return scoped_threads > 0 ? scoped_threads : CpuQuotaThreads();
}

ScopedIntraOpThreads::ScopedIntraOpThreads(int threads) : saved_(scoped_threads) {
  if (threads > 0) scoped_threads = threads;
}

ScopedIntraOpThreads::~ScopedIntraOpThreads() { scoped_threads = saved_; }

void ApplyThreadSettings() {
  // OpenMP's thread count is per calling thread: every engine thread (server
  // workers, lanes) adopts its current setting before a parallel region, so
  // oneDNN and ParallelFor use the quota (or the session's count), not the
  // host's cores.
  thread_local int applied = 0;
  int threads = IntraOpThreads();
  if (applied != threads) {
    omp_set_num_threads(threads);
    applied = threads;
  }
}

void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  ApplyThreadSettings();
  grain = std::max<int64_t>(grain, 1);
  int threads = IntraOpThreads();
  int64_t blocks = std::min<int64_t>((n + grain - 1) / grain, threads);
  if (blocks <= 1 || omp_in_parallel()) {
    fn(0, n);
    return;
  }
  int64_t chunk = (n + blocks - 1) / blocks;
#pragma omp parallel for num_threads(static_cast<int>(blocks)) schedule(static, 1)
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t begin = b * chunk;
    int64_t end = std::min(n, begin + chunk);
    if (begin < end) fn(begin, end);
  }
}

}  // namespace onyx
