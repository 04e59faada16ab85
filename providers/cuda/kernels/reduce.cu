// Reductions of x [outer, r, inner] over the middle axis, accumulated in
// float: a warp per row when inner == 1 (a block per row for long rows), a
// thread per output column otherwise (coalesced along inner).
#include <cmath>

#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

template <ReduceOp kOp>
struct Reducer {
  __device__ __forceinline__ static float Identity() {
    if constexpr (kOp == ReduceOp::kMax) return -INFINITY;
    if constexpr (kOp == ReduceOp::kMin) return INFINITY;
    return 0.f;
  }
  __device__ __forceinline__ static float Map(float x) {
    if constexpr (kOp == ReduceOp::kSumSquare) return x * x;
    return x;
  }
  __device__ __forceinline__ float operator()(float a, float b) const {
    if constexpr (kOp == ReduceOp::kMax) return MaxOp()(a, b);
    if constexpr (kOp == ReduceOp::kMin) return MinOp()(a, b);
    return a + b;
  }
  __device__ __forceinline__ static float Finish(float acc, uint32_t r) {
    if constexpr (kOp == ReduceOp::kMean) return acc / static_cast<float>(r);
    return acc;
  }
};

constexpr int kLongRow = 2048;

template <typename T, ReduceOp kOp>
__global__ void WarpRowKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t rows, uint32_t r) {
  const uint32_t row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const uint32_t lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps leave together
  const Reducer<kOp> reduce;
  const T* p = x + row * r;
  float acc = Reducer<kOp>::Identity();
  for (uint32_t j = lane; j < r; j += 32) acc = reduce(acc, Reducer<kOp>::Map(ToFloat(p[j])));
  acc = WarpReduce(acc, reduce);
  if (lane == 0) y[row] = FromFloat<T>(Reducer<kOp>::Finish(acc, r));
}

template <typename T, ReduceOp kOp>
__global__ void BlockRowKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t r) {
  __shared__ float shared[32];
  const Reducer<kOp> reduce;
  const T* p = x + blockIdx.x * r;
  float acc = Reducer<kOp>::Identity();
  for (uint32_t j = threadIdx.x; j < r; j += blockDim.x) acc = reduce(acc, Reducer<kOp>::Map(ToFloat(p[j])));
  acc = BlockReduce(acc, reduce, shared);
  if (threadIdx.x == 0) y[blockIdx.x] = FromFloat<T>(Reducer<kOp>::Finish(acc, r));
}

template <typename T, ReduceOp kOp>
__global__ void ColumnKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, uint32_t r, FastDivmod inner) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t o = inner.Div(i);
  const uint32_t k = i - o * inner.d;
  const Reducer<kOp> reduce;
  const T* p = x + o * r * inner.d + k;
  float acc = Reducer<kOp>::Identity();
  for (uint32_t j = 0; j < r; ++j) acc = reduce(acc, Reducer<kOp>::Map(ToFloat(p[j * inner.d])));
  y[i] = FromFloat<T>(Reducer<kOp>::Finish(acc, r));
}

template <typename T, ReduceOp kOp>
cudaError_t ReduceTyped(const void* xv, void* yv, int64_t outer, int64_t r, int64_t inner, cudaStream_t s) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  if (inner == 1) {
    if (r >= kLongRow) {
      BlockRowKernel<T, kOp><<<static_cast<unsigned>(outer), kThreads, 0, s>>>(x, y, static_cast<uint32_t>(r));
    } else {
      constexpr int kRowsPerBlock = kThreads / 32;
      WarpRowKernel<T, kOp><<<static_cast<unsigned>((outer + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0, s>>>(
          x, y, static_cast<uint32_t>(outer), static_cast<uint32_t>(r));
    }
  } else {
    const int64_t n = outer * inner;
    ColumnKernel<T, kOp>
        <<<BlocksFor(n), kThreads, 0, s>>>(x, y, static_cast<uint32_t>(n), static_cast<uint32_t>(r), FastDivmod(inner));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t ReduceDispatch(ReduceOp op, const void* x, void* y, int64_t outer, int64_t r, int64_t inner,
                           cudaStream_t s) {
  switch (op) {
    case ReduceOp::kSum: return ReduceTyped<T, ReduceOp::kSum>(x, y, outer, r, inner, s);
    case ReduceOp::kMean: return ReduceTyped<T, ReduceOp::kMean>(x, y, outer, r, inner, s);
    case ReduceOp::kMax: return ReduceTyped<T, ReduceOp::kMax>(x, y, outer, r, inner, s);
    case ReduceOp::kMin: return ReduceTyped<T, ReduceOp::kMin>(x, y, outer, r, inner, s);
    case ReduceOp::kSumSquare: return ReduceTyped<T, ReduceOp::kSumSquare>(x, y, outer, r, inner, s);
  }
  return cudaErrorInvalidValue;
}

template <typename T, ReduceOp kOp>
__global__ void StridedKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, uint32_t r, IndexMap kept,
                              IndexMap reduced) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Reducer<kOp> reduce;
  const T* p = x + kept.Offset(i);
  float acc = Reducer<kOp>::Identity();
  for (uint32_t j = 0; j < r; ++j) acc = reduce(acc, Reducer<kOp>::Map(ToFloat(p[reduced.Offset(j)])));
  y[i] = FromFloat<T>(Reducer<kOp>::Finish(acc, r));
}

IndexMap MapOf(const StridedCopyArgs& a) {
  IndexMap m;
  m.rank = a.rank;
  SetOutStrides(a.out_dims, a.rank, m.out_stride);
  for (int k = 0; k < a.rank; ++k) m.in_stride[k] = static_cast<int32_t>(a.in_strides[k]);
  return m;
}

template <typename T>
cudaError_t StridedDispatch(ReduceOp op, const StridedCopyArgs& kept, const StridedCopyArgs& reduced, const void* xv,
                            void* yv, cudaStream_t s) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  const unsigned blocks = BlocksFor(kept.n);
  const uint32_t n = static_cast<uint32_t>(kept.n), r = static_cast<uint32_t>(reduced.n);
  const IndexMap km = MapOf(kept), rm = MapOf(reduced);
  switch (op) {
    case ReduceOp::kSum: StridedKernel<T, ReduceOp::kSum><<<blocks, kThreads, 0, s>>>(x, y, n, r, km, rm); break;
    case ReduceOp::kMean: StridedKernel<T, ReduceOp::kMean><<<blocks, kThreads, 0, s>>>(x, y, n, r, km, rm); break;
    case ReduceOp::kMax: StridedKernel<T, ReduceOp::kMax><<<blocks, kThreads, 0, s>>>(x, y, n, r, km, rm); break;
    case ReduceOp::kMin: StridedKernel<T, ReduceOp::kMin><<<blocks, kThreads, 0, s>>>(x, y, n, r, km, rm); break;
    case ReduceOp::kSumSquare:
      StridedKernel<T, ReduceOp::kSumSquare><<<blocks, kThreads, 0, s>>>(x, y, n, r, km, rm);
      break;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchReduceStrided(ReduceOp op, DataType type, const StridedCopyArgs& kept, const StridedCopyArgs& reduced,
                                const void* x, void* y, cudaStream_t stream) {
  if (kept.n <= 0) return cudaSuccess;
  if (type == DataType::kFloat) return StridedDispatch<float>(op, kept, reduced, x, y, stream);
  if (type == DataType::kFloat16) return StridedDispatch<__half>(op, kept, reduced, x, y, stream);
  return cudaErrorInvalidValue;
}

cudaError_t LaunchReduce(ReduceOp op, DataType type, const void* x, void* y, int64_t outer, int64_t r, int64_t inner,
                         cudaStream_t stream) {
  if (outer <= 0 || inner <= 0) return cudaSuccess;
  if (type == DataType::kFloat) return ReduceDispatch<float>(op, x, y, outer, r, inner, stream);
  if (type == DataType::kFloat16) return ReduceDispatch<__half>(op, x, y, outer, r, inner, stream);
  return cudaErrorInvalidValue;
}

}  // namespace onyx::cuda_ops
