// n / d and n % d for 0 <= n < 2^31 by one multiply-high and a shift
// (Granlund-Montgomery), the divisor's constants computed once on the host:
// the index arithmetic of the CUDA kernels, where integer division is slow.
// Usable on the host too (tests check it against `/`).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ONYX_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ONYX_HOST_DEVICE inline
#endif

namespace onyx::cuda_ops {

struct FastDivmod {
  uint32_t d = 1;  // the divisor
  uint32_t m = 1;  // magic multiplier
  uint32_t s = 0;  // shift: the smallest s with 2^s >= d

  FastDivmod() = default;
  // Divisors below 1 are taken as 1 (empty dims never reach a kernel).
  explicit FastDivmod(int64_t divisor) {
    d = divisor < 1 ? 1u : static_cast<uint32_t>(divisor);
    for (s = 0; s < 31; ++s) {
      if ((uint64_t{1} << s) >= d) break;
    }
    m = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - d)) / d + 1);
  }

  ONYX_HOST_DEVICE uint32_t Div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, m);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * m) >> 32);
#endif
    return (hi + n) >> s;
  }
  ONYX_HOST_DEVICE uint32_t Mod(uint32_t n) const { return n - Div(n) * d; }
};

}  // namespace onyx::cuda_ops
