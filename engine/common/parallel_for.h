// Data-parallel loops for kernels. onyx uses the OpenMP runtime that oneDNN is
// built with, so kernels and oneDNN primitives share one set of worker threads
// and never oversubscribe the CPU quota.
//
//   ParallelFor(n, /*grain=*/4096, [&](int64_t begin, int64_t end) { ... });
#pragma once

#include <cstdint>
#include <functional>

namespace onyx {

// Splits [0, n) into contiguous blocks of at least `grain` items and calls
// fn(begin, end) for each, possibly on several threads. Runs inline when n is
// small or only one thread is configured.
void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Makes the calling thread's OpenMP runtime (and so oneDNN) use
// IntraOpThreads(); cheap after the first call. Called by ParallelFor and
// before oneDNN calls.
void ApplyThreadSettings();

// The calling thread's count: its innermost ScopedIntraOpThreads, else the
// process's CPU quota.
int IntraOpThreads();

// Overrides IntraOpThreads() on the calling thread for its lifetime, so that
// sessions with different thread counts share the process (each run executes
// its nodes under its session's count). `threads` <= 0 keeps the current value.
class ScopedIntraOpThreads {
 public:
  explicit ScopedIntraOpThreads(int threads);
  ~ScopedIntraOpThreads();
  ScopedIntraOpThreads(const ScopedIntraOpThreads&) = delete;
  ScopedIntraOpThreads& operator=(const ScopedIntraOpThreads&) = delete;

 private:
  int saved_;
};

// Below this many multiply-adds a GEMM runs on the calling thread alone: waking
// the OpenMP team (tens of microseconds when it sleeps between requests) costs
// more than the product itself.
inline constexpr int64_t kSerialGemmWork = int64_t{1} << 17;

}  // namespace onyx
