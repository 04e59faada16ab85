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

// Sets the number of threads ParallelFor and oneDNN use (process-wide).
void SetIntraOpThreads(int threads);
int IntraOpThreads();

}  // namespace onyx
