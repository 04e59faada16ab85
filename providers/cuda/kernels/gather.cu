// Gather along one axis of x viewed as [outer, axis_dim, inner].
#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

// One thread per output element of [outer, num_indices, inner].
template <typename T, typename Index>
__global__ void GatherKernel(const T* __restrict__ x, const Index* __restrict__ indices, T* __restrict__ y, uint32_t n,
                             FastDivmod inner, FastDivmod num_indices, int64_t axis_dim) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t row = inner.Div(i);  // outer * num_indices + j
  const uint32_t k = i - row * inner.d;
  const uint32_t o = num_indices.Div(row);
  const uint32_t j = row - o * num_indices.d;
  int64_t index = static_cast<int64_t>(indices[j]);
  if (index < 0) index += axis_dim;
  if (index < 0 || index >= axis_dim) {
    y[i] = T(0);
    return;
  }
  y[i] = x[(static_cast<uint32_t>(o) * static_cast<uint32_t>(axis_dim) + static_cast<uint32_t>(index)) * inner.d + k];
}

template <size_t kBytes, typename Index>
cudaError_t GatherSized(const void* x, const void* indices, void* y, int64_t outer, int64_t axis_dim,
                        int64_t num_indices, int64_t inner, cudaStream_t s) {
  using T = typename CopyType<kBytes>::type;
  const int64_t n = outer * num_indices * inner;
  GatherKernel<T, Index><<<BlocksFor(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const Index*>(indices),
                                                           static_cast<T*>(y), static_cast<uint32_t>(n),
                                                           FastDivmod(inner), FastDivmod(num_indices), axis_dim);
  return cudaGetLastError();
}

template <typename Index>
cudaError_t GatherIndexed(size_t elem_size, const void* x, const void* indices, void* y, int64_t outer,
                          int64_t axis_dim, int64_t num_indices, int64_t inner, cudaStream_t s) {
  switch (elem_size) {
    case 1: return GatherSized<1, Index>(x, indices, y, outer, axis_dim, num_indices, inner, s);
    case 2: return GatherSized<2, Index>(x, indices, y, outer, axis_dim, num_indices, inner, s);
    case 4: return GatherSized<4, Index>(x, indices, y, outer, axis_dim, num_indices, inner, s);
    case 8: return GatherSized<8, Index>(x, indices, y, outer, axis_dim, num_indices, inner, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchGather(size_t elem_size, DataType index_type, const void* x, const void* indices, void* y,
                         int64_t outer, int64_t axis_dim, int64_t num_indices, int64_t inner, cudaStream_t stream) {
  if (outer <= 0 || num_indices <= 0 || inner <= 0) return cudaSuccess;
  if (index_type == DataType::kInt64) {
    return GatherIndexed<int64_t>(elem_size, x, indices, y, outer, axis_dim, num_indices, inner, stream);
  }
  if (index_type == DataType::kInt32) {
    return GatherIndexed<int32_t>(elem_size, x, indices, y, outer, axis_dim, num_indices, inner, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace onyx::cuda_ops
