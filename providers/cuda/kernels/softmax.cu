// Softmax and LogSoftmax of x [outer, d, inner] along d, in float.
// inner == 1, d <= 1024: a warp per row with the row in registers (one read,
// one write); longer rows: a block per row, three passes over the row (the
// later ones from cache); inner > 1: a thread per column, coalesced along
// inner.
#include <cmath>

#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

template <typename T, int kPerLane, bool kLog>
__global__ void WarpSoftmaxKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t rows, uint32_t d) {
  const uint32_t row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const uint32_t lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps leave together
  const T* p = x + row * d;
  T* q = y + row * d;
  float v[kPerLane];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const uint32_t j = lane + 32 * k;
    v[k] = j < d ? ToFloat(p[j]) : -INFINITY;
    m = MaxOp()(m, v[k]);
  }
  m = WarpReduce(m, MaxOp());
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const float e = lane + 32 * k < d ? expf(v[k] - m) : 0.f;
    if constexpr (!kLog) v[k] = e;
    sum += e;
  }
  sum = WarpReduce(sum, SumOp());
  const float scale = 1.f / sum;
  const float log_sum = logf(sum);
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const uint32_t j = lane + 32 * k;
    if (j < d) q[j] = FromFloat<T>(kLog ? v[k] - m - log_sum : v[k] * scale);
  }
}

template <typename T, bool kLog>
__global__ void BlockSoftmaxKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t d) {
  __shared__ float shared[32];
  const T* p = x + blockIdx.x * d;
  T* q = y + blockIdx.x * d;
  float m = -INFINITY;
  for (uint32_t j = threadIdx.x; j < d; j += blockDim.x) m = MaxOp()(m, ToFloat(p[j]));
  m = BlockReduce(m, MaxOp(), shared);
  float sum = 0.f;
  for (uint32_t j = threadIdx.x; j < d; j += blockDim.x) sum += expf(ToFloat(p[j]) - m);
  sum = BlockReduce(sum, SumOp(), shared);
  const float scale = 1.f / sum;
  const float log_sum = logf(sum);
  for (uint32_t j = threadIdx.x; j < d; j += blockDim.x) {
    const float v = ToFloat(p[j]) - m;
    q[j] = FromFloat<T>(kLog ? v - log_sum : expf(v) * scale);
  }
}

template <typename T, bool kLog>
__global__ void ColumnSoftmaxKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, uint32_t d,
                                    FastDivmod inner) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t o = inner.Div(i);
  const uint32_t k = i - o * inner.d;
  const uint32_t base = o * d * inner.d + k;
  float m = -INFINITY;
  for (uint32_t j = 0; j < d; ++j) m = MaxOp()(m, ToFloat(x[base + j * inner.d]));
  float sum = 0.f;
  for (uint32_t j = 0; j < d; ++j) sum += expf(ToFloat(x[base + j * inner.d]) - m);
  const float scale = 1.f / sum;
  const float log_sum = logf(sum);
  for (uint32_t j = 0; j < d; ++j) {
    const float v = ToFloat(x[base + j * inner.d]) - m;
    y[base + j * inner.d] = FromFloat<T>(kLog ? v - log_sum : expf(v) * scale);
  }
}

template <typename T, int kPerLane, bool kLog>
void LaunchWarpSoftmax(const T* x, T* y, int64_t rows, int64_t d, cudaStream_t s) {
  constexpr int kRowsPerBlock = kThreads / 32;
  WarpSoftmaxKernel<T, kPerLane, kLog>
      <<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0, s>>>(
          x, y, static_cast<uint32_t>(rows), static_cast<uint32_t>(d));
}

template <typename T, bool kLog>
cudaError_t SoftmaxTyped(const void* xv, void* yv, int64_t outer, int64_t d, int64_t inner, cudaStream_t s) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  if (inner > 1) {
    const int64_t n = outer * inner;
    ColumnSoftmaxKernel<T, kLog>
        <<<BlocksFor(n), kThreads, 0, s>>>(x, y, static_cast<uint32_t>(n), static_cast<uint32_t>(d), FastDivmod(inner));
  } else if (d <= 32) {
    LaunchWarpSoftmax<T, 1, kLog>(x, y, outer, d, s);
  } else if (d <= 64) {
    LaunchWarpSoftmax<T, 2, kLog>(x, y, outer, d, s);
  } else if (d <= 128) {
    LaunchWarpSoftmax<T, 4, kLog>(x, y, outer, d, s);
  } else if (d <= 256) {
    LaunchWarpSoftmax<T, 8, kLog>(x, y, outer, d, s);
  } else if (d <= 512) {
    LaunchWarpSoftmax<T, 16, kLog>(x, y, outer, d, s);
  } else if (d <= 1024) {
    LaunchWarpSoftmax<T, 32, kLog>(x, y, outer, d, s);
  } else {
    BlockSoftmaxKernel<T, kLog><<<static_cast<unsigned>(outer), kThreads, 0, s>>>(x, y, static_cast<uint32_t>(d));
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchSoftmax(DataType type, const void* x, void* y, int64_t outer, int64_t d, int64_t inner,
                          bool log_softmax, cudaStream_t stream) {
  if (outer <= 0 || d <= 0 || inner <= 0) return cudaSuccess;
  if (type == DataType::kFloat) {
    return log_softmax ? SoftmaxTyped<float, true>(x, y, outer, d, inner, stream)
                       : SoftmaxTyped<float, false>(x, y, outer, d, inner, stream);
  }
  if (type == DataType::kFloat16) {
    return log_softmax ? SoftmaxTyped<__half, true>(x, y, outer, d, inner, stream)
                       : SoftmaxTyped<__half, false>(x, y, outer, d, inner, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace onyx::cuda_ops
