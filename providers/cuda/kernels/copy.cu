// Data-movement kernels by element size: the strided copy behind Transpose,
// Slice and Expand, a shared-memory tiled 2-D transpose, zero padding, and
// the small by-value fill behind Shape.
#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

template <typename T>
__global__ void StridedCopyKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, int32_t base, IndexMap map) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[base + map.Offset(i)];
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;

// One 32x32 tile per block (32x8 threads, 4 rows each): coalesced reads of x
// rows and coalesced writes of y rows; the +1 column avoids bank conflicts.
template <typename T>
__global__ void Transpose2DKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t rows, uint32_t cols,
                                  uint32_t batch) {
  __shared__ T tile[kTile][kTile + 1];
  const uint32_t c0 = blockIdx.x * kTile, r0 = blockIdx.y * kTile;
  for (uint32_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const T* xb = x + b * rows * cols;
    T* yb = y + b * rows * cols;
    const uint32_t c = c0 + threadIdx.x;
    for (uint32_t j = threadIdx.y; j < kTile; j += kTileRows) {
      const uint32_t r = r0 + j;
      if (r < rows && c < cols) tile[j][threadIdx.x] = xb[r * cols + c];
    }
    __syncthreads();
    const uint32_t r = r0 + threadIdx.x;
    for (uint32_t j = threadIdx.y; j < kTile; j += kTileRows) {
      const uint32_t cc = c0 + j;
      if (cc < cols && r < rows) yb[cc * rows + r] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

struct PadMap {
  int32_t rank;
  FastDivmod out_stride[kMaxRank];
  int32_t in_dim[kMaxRank];
  int32_t in_stride[kMaxRank];
  int32_t pad_begin[kMaxRank];
};

template <typename T>
__global__ void PadKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, PadMap map) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t rest = i;
  int32_t offset = 0;
  bool inside = true;
#pragma unroll
  for (int k = 0; k < kMaxRank; ++k) {
    if (k == map.rank) break;
    const uint32_t q = map.out_stride[k].Div(rest);
    rest -= q * map.out_stride[k].d;
    const int32_t c = static_cast<int32_t>(q) - map.pad_begin[k];
    inside = inside && c >= 0 && c < map.in_dim[k];
    offset += c * map.in_stride[k];
  }
  y[i] = inside ? x[offset] : T(0);
}

struct SmallInt64s {
  int64_t v[kMaxRank];
};

__global__ void FillInt64Kernel(SmallInt64s values, int32_t n, int64_t* y) {
  const int i = threadIdx.x;
  if (i >= n) return;
  int64_t v = 0;  // selected without indexing the parameter array (no local copy)
#pragma unroll
  for (int k = 0; k < kMaxRank; ++k) v = k == i ? values.v[k] : v;
  y[i] = v;
}

template <size_t kBytes>
cudaError_t StridedCopySized(const StridedCopyArgs& args, const void* x, void* y, cudaStream_t s) {
  using T = typename CopyType<kBytes>::type;
  IndexMap map;
  map.rank = args.rank;
  SetOutStrides(args.out_dims, args.rank, map.out_stride);
  for (int k = 0; k < args.rank; ++k) map.in_stride[k] = static_cast<int32_t>(args.in_strides[k]);
  StridedCopyKernel<T><<<BlocksFor(args.n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                              static_cast<uint32_t>(args.n),
                                                              static_cast<int32_t>(args.base), map);
  return cudaGetLastError();
}

template <size_t kBytes>
cudaError_t Transpose2DSized(int64_t batch, int64_t rows, int64_t cols, const void* x, void* y, cudaStream_t s) {
  using T = typename CopyType<kBytes>::type;
  const dim3 block(kTile, kTileRows);
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile),
                  static_cast<unsigned>(batch < 65535 ? batch : 65535));
  Transpose2DKernel<T><<<grid, block, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), static_cast<uint32_t>(rows),
                                              static_cast<uint32_t>(cols), static_cast<uint32_t>(batch));
  return cudaGetLastError();
}

template <size_t kBytes>
cudaError_t PadSized(const PadArgs& args, const void* x, void* y, cudaStream_t s) {
  using T = typename CopyType<kBytes>::type;
  PadMap map;
  map.rank = args.rank;
  SetOutStrides(args.out_dims, args.rank, map.out_stride);
  int64_t stride = 1;
  for (int k = args.rank - 1; k >= 0; --k) {
    map.in_dim[k] = static_cast<int32_t>(args.in_dims[k]);
    map.in_stride[k] = static_cast<int32_t>(stride);
    map.pad_begin[k] = static_cast<int32_t>(args.pad_begin[k]);
    stride *= args.in_dims[k];
  }
  PadKernel<T><<<BlocksFor(args.n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                      static_cast<uint32_t>(args.n), map);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchStridedCopy(size_t elem_size, const StridedCopyArgs& args, const void* x, void* y,
                              cudaStream_t stream) {
  if (args.n <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return StridedCopySized<1>(args, x, y, stream);
    case 2: return StridedCopySized<2>(args, x, y, stream);
    case 4: return StridedCopySized<4>(args, x, y, stream);
    case 8: return StridedCopySized<8>(args, x, y, stream);
    case 16: return StridedCopySized<16>(args, x, y, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchTranspose2D(size_t elem_size, int64_t batch, int64_t rows, int64_t cols, const void* x, void* y,
                              cudaStream_t stream) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return Transpose2DSized<1>(batch, rows, cols, x, y, stream);
    case 2: return Transpose2DSized<2>(batch, rows, cols, x, y, stream);
    case 4: return Transpose2DSized<4>(batch, rows, cols, x, y, stream);
    case 8: return Transpose2DSized<8>(batch, rows, cols, x, y, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchPad(size_t elem_size, const PadArgs& args, const void* x, void* y, cudaStream_t stream) {
  if (args.n <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return PadSized<1>(args, x, y, stream);
    case 2: return PadSized<2>(args, x, y, stream);
    case 4: return PadSized<4>(args, x, y, stream);
    case 8: return PadSized<8>(args, x, y, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchFillInt64(const int64_t* values, int32_t n, int64_t* y, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (n > kMaxRank) return cudaErrorInvalidValue;
  SmallInt64s v{};
  for (int i = 0; i < n; ++i) v.v[i] = values[i];
  FillInt64Kernel<<<1, kMaxRank, 0, stream>>>(v, n, y);
  return cudaGetLastError();
}

}  // namespace onyx::cuda_ops
