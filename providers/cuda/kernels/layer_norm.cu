// Layer normalization of rows: mean, then the variance about it (two passes,
// no cancellation), in float. Rows up to 1024 elements: a warp per row with
// the row in registers; longer rows: a block per row reading the row three
// times (the later passes from cache).
#include <cmath>

#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

template <typename T, int kPerLane>
__global__ void WarpLayerNormKernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                    T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ inv_std_out,
                                    uint32_t rows, uint32_t cols, float epsilon) {
  const uint32_t row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const uint32_t lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps leave together
  const T* p = x + row * cols;
  float v[kPerLane];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const uint32_t j = lane + 32 * k;
    v[k] = j < cols ? ToFloat(p[j]) : 0.f;
    sum += v[k];
  }
  const float mean = WarpReduce(sum, SumOp()) / static_cast<float>(cols);
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const float c = lane + 32 * k < cols ? v[k] - mean : 0.f;
    sq += c * c;
  }
  const float inv_std = 1.f / sqrtf(WarpReduce(sq, SumOp()) / static_cast<float>(cols) + epsilon);
  T* q = y + row * cols;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const uint32_t j = lane + 32 * k;
    if (j < cols) {
      const float b = bias != nullptr ? ToFloat(bias[j]) : 0.f;
      q[j] = FromFloat<T>((v[k] - mean) * inv_std * ToFloat(scale[j]) + b);
    }
  }
  if (lane == 0) {
    if (mean_out != nullptr) mean_out[row] = mean;
    if (inv_std_out != nullptr) inv_std_out[row] = inv_std;
  }
}

template <typename T>
__global__ void BlockLayerNormKernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                     T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ inv_std_out,
                                     uint32_t cols, float epsilon) {
  __shared__ float shared[32];
  const T* p = x + blockIdx.x * cols;
  float sum = 0.f;
  for (uint32_t j = threadIdx.x; j < cols; j += blockDim.x) sum += ToFloat(p[j]);
  const float mean = BlockReduce(sum, SumOp(), shared) / static_cast<float>(cols);
  float sq = 0.f;
  for (uint32_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float c = ToFloat(p[j]) - mean;
    sq += c * c;
  }
  const float inv_std = 1.f / sqrtf(BlockReduce(sq, SumOp(), shared) / static_cast<float>(cols) + epsilon);
  T* q = y + blockIdx.x * cols;
  for (uint32_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float b = bias != nullptr ? ToFloat(bias[j]) : 0.f;
    q[j] = FromFloat<T>((ToFloat(p[j]) - mean) * inv_std * ToFloat(scale[j]) + b);
  }
  if (threadIdx.x == 0) {
    if (mean_out != nullptr) mean_out[blockIdx.x] = mean;
    if (inv_std_out != nullptr) inv_std_out[blockIdx.x] = inv_std;
  }
}

template <typename T, int kPerLane>
void LaunchWarpLayerNorm(const T* x, const T* scale, const T* bias, T* y, float* mean, float* inv_std, int64_t rows,
                         int64_t cols, float epsilon, cudaStream_t s) {
  constexpr int kRowsPerBlock = kThreads / 32;
  WarpLayerNormKernel<T, kPerLane>
      <<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0, s>>>(
          x, scale, bias, y, mean, inv_std, static_cast<uint32_t>(rows), static_cast<uint32_t>(cols), epsilon);
}

template <typename T>
cudaError_t LayerNormTyped(const void* xv, const void* sv, const void* bv, void* yv, float* mean, float* inv_std,
                           int64_t rows, int64_t cols, float eps, cudaStream_t s) {
  const T* x = static_cast<const T*>(xv);
  const T* scale = static_cast<const T*>(sv);
  const T* bias = static_cast<const T*>(bv);
  T* y = static_cast<T*>(yv);
  if (cols <= 32) {
    LaunchWarpLayerNorm<T, 1>(x, scale, bias, y, mean, inv_std, rows, cols, eps, s);
  } else if (cols <= 64) {
    LaunchWarpLayerNorm<T, 2>(x, scale, bias, y, mean, inv_std, rows, cols, eps, s);
  } else if (cols <= 128) {
    LaunchWarpLayerNorm<T, 4>(x, scale, bias, y, mean, inv_std, rows, cols, eps, s);
  } else if (cols <= 256) {
    LaunchWarpLayerNorm<T, 8>(x, scale, bias, y, mean, inv_std, rows, cols, eps, s);
  } else if (cols <= 512) {
    LaunchWarpLayerNorm<T, 16>(x, scale, bias, y, mean, inv_std, rows, cols, eps, s);
  } else if (cols <= 1024) {
    LaunchWarpLayerNorm<T, 32>(x, scale, bias, y, mean, inv_std, rows, cols, eps, s);
  } else {
    BlockLayerNormKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, scale, bias, y, mean, inv_std,
                                                                             static_cast<uint32_t>(cols), eps);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchLayerNorm(DataType type, const void* x, const void* scale, const void* bias, void* y, float* mean,
                            float* inv_std, int64_t rows, int64_t cols, float epsilon, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (type == DataType::kFloat) {
    return LayerNormTyped<float>(x, scale, bias, y, mean, inv_std, rows, cols, epsilon, stream);
  }
  if (type == DataType::kFloat16) {
    return LayerNormTyped<__half>(x, scale, bias, y, mean, inv_std, rows, cols, epsilon, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace onyx::cuda_ops
