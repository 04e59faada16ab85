// Device-side helpers shared by the provider's .cu files: launch geometry,
// float/half conversion, 32-bit fast division and index maps over collapsed
// shapes, block reductions. Included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/kernels/fast_divmod.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {

inline constexpr int kThreads = 256;

// Blocks covering n items at `per_thread` items per thread.
inline unsigned BlocksFor(int64_t n, int per_thread = 1, int threads = kThreads) {
  const int64_t per_block = int64_t{threads} * per_thread;
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

inline bool Aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
template <typename T>
__device__ __forceinline__ T FromFloat(float x);
template <>
__device__ __forceinline__ float FromFloat<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float x) {
  return __float2half_rn(x);
}

// N elements of T loaded and stored as one aligned vector access.
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// Unsigned type of the given size for type-agnostic copies.
template <size_t kBytes>
struct CopyType;
template <>
struct CopyType<1> {
  using type = uint8_t;
};
template <>
struct CopyType<2> {
  using type = uint16_t;
};
template <>
struct CopyType<4> {
  using type = uint32_t;
};
template <>
struct CopyType<8> {
  using type = uint64_t;
};
template <>
struct CopyType<16> {
  using type = uint4;
};

// Output index -> input element offset over up to kMaxRank collapsed dims:
// offset = sum_k coord_k * in_stride[k], coordinates taken from the most
// significant dimension down. Strides may be negative (reversed slices) or
// zero (broadcast); every partial sum is a valid offset.
struct IndexMap {
  int32_t rank = 0;
  FastDivmod out_stride[kMaxRank];  // row-major output strides
  int32_t in_stride[kMaxRank] = {};

  __device__ __forceinline__ int32_t Offset(uint32_t index) const {
    int32_t offset = 0;
#pragma unroll
    for (int k = 0; k < kMaxRank; ++k) {
      if (k == rank) break;
      const uint32_t q = out_stride[k].Div(index);
      index -= q * out_stride[k].d;
      offset += static_cast<int32_t>(q) * in_stride[k];
    }
    return offset;
  }
};

// Row-major strides of `dims` as divisors, for IndexMap and friends.
inline void SetOutStrides(const int64_t* dims, int32_t rank, FastDivmod* out) {
  int64_t stride = 1;
  for (int32_t k = rank - 1; k >= 0; --k) {
    out[k] = FastDivmod(stride);
    stride *= dims[k];
  }
}

// Same offsets for up to three inputs of one broadcast (one division per
// dimension serves all of them).
template <int kInputs>
struct BroadcastMap {
  int32_t rank = 0;
  FastDivmod out_stride[kMaxRank];
  int32_t in_stride[kInputs][kMaxRank] = {};

  __device__ __forceinline__ void Offsets(uint32_t index, int32_t (&offset)[kInputs]) const {
#pragma unroll
    for (int i = 0; i < kInputs; ++i) offset[i] = 0;
#pragma unroll
    for (int k = 0; k < kMaxRank; ++k) {
      if (k == rank) break;
      const uint32_t q = out_stride[k].Div(index);
      index -= q * out_stride[k].d;
#pragma unroll
      for (int i = 0; i < kInputs; ++i) offset[i] += static_cast<int32_t>(q) * in_stride[i][k];
    }
  }
};

template <int kInputs>
inline BroadcastMap<kInputs> MakeBroadcastMap(const BroadcastArgs& args) {
  BroadcastMap<kInputs> map;
  map.rank = args.rank;
  SetOutStrides(args.dims, args.rank, map.out_stride);
  for (int i = 0; i < kInputs; ++i) {
    for (int k = 0; k < args.rank; ++k) map.in_stride[i][k] = static_cast<int32_t>(args.strides[i][k]);
  }
  return map;
}

// Warp and block reductions (float). `Combine` is a binary functor.
template <typename Combine>
__device__ __forceinline__ float WarpReduce(float v, Combine combine) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces v over the whole block (blockDim.x a multiple of 32, <= 1024);
// every thread gets the result. `shared` holds 32 floats; the function
// synchronizes the block, so all threads must call it.
template <typename Combine>
__device__ __forceinline__ float BlockReduce(float v, Combine combine, float* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = WarpReduce(v, combine);
  __syncthreads();  // `shared` may still be read from a previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = shared[0];
  for (int w = 1; w < warps; ++w) v = combine(v, shared[w]);
  return v;
}

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
// Max and min that propagate NaN (numpy semantics).
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return (b > a || b != b) ? b : a; }
};
struct MinOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return (b < a || b != b) ? b : a; }
};

}  // namespace onyx::cuda_ops
