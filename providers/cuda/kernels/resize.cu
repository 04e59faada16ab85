// Resize, nearest and (bi/tri)linear, as ONNX defines it per axis: the
// output coordinate maps to an input coordinate by the coordinate
// transformation mode (in double, as the CPU provider computes it), then
// rounds (nearest) or interpolates between its two neighbours clamped to the
// input (linear). A thread per output element.
#include <cmath>

#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

struct ResizeMap {
  int32_t rank;
  int32_t active_count;    // linear: axes that interpolate (<= 3)
  int32_t slot[kMaxRank];  // linear: an axis's slot among them, -1 if it passes through
  FastDivmod out_stride[kMaxRank];
  int32_t in_dim[kMaxRank];
  int32_t out_dim[kMaxRank];
  int32_t in_stride[kMaxRank];
  double scale[kMaxRank];
  bool identity[kMaxRank];  // in == out and scale 1: coordinate passes through
  ResizeCoordMode coord;
  ResizeNearestMode nearest;
};

__device__ __forceinline__ double Original(const ResizeMap& m, int a, int32_t x) {
  const double scale = m.scale[a];
  const double in = m.in_dim[a];
  const double out_width = scale * in;
  const double xr = x;
  switch (m.coord) {
    case ResizeCoordMode::kHalfPixel: return (xr + 0.5) / scale - 0.5;
    case ResizeCoordMode::kPytorchHalfPixel: return out_width > 1 ? (xr + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoordMode::kAlignCorners: return out_width == 1 ? 0.0 : xr * (in - 1) / (out_width - 1);
    case ResizeCoordMode::kAsymmetric: return xr / scale;
    case ResizeCoordMode::kTfHalfPixelForNn: return (xr + 0.5) / scale;
    case ResizeCoordMode::kHalfPixelSymmetric: {
      const double adjustment = m.out_dim[a] / out_width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (xr + 0.5) / scale - 0.5;
    }
  }
  return 0.0;
}

__device__ __forceinline__ int32_t NearestIndex(const ResizeMap& m, int a, int32_t x) {
  const double v = Original(m, a, x);
  const double fl = floor(v);
  int64_t index;
  if (v == fl) {
    index = static_cast<int64_t>(fl);
  } else {
    const double ratio = v - fl;
    switch (m.nearest) {
      case ResizeNearestMode::kRoundPreferFloor: index = static_cast<int64_t>(ratio <= 0.5 ? fl : fl + 1); break;
      case ResizeNearestMode::kRoundPreferCeil: index = static_cast<int64_t>(ratio < 0.5 ? fl : fl + 1); break;
      case ResizeNearestMode::kFloor: index = static_cast<int64_t>(fl); break;
      case ResizeNearestMode::kCeil: index = static_cast<int64_t>(fl + 1); break;
      default: index = m.scale[a] < 1 ? static_cast<int64_t>(ceil(v)) : static_cast<int64_t>(v); break;
    }
  }
  return static_cast<int32_t>(index < 0 ? 0 : (index >= m.in_dim[a] ? m.in_dim[a] - 1 : index));
}

template <typename T>
__global__ void ResizeNearestKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, ResizeMap m) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t rest = i;
  int32_t offset = 0;
#pragma unroll
  for (int a = 0; a < kMaxRank; ++a) {
    if (a == m.rank) break;
    const uint32_t q = m.out_stride[a].Div(rest);
    rest -= q * m.out_stride[a].d;
    const int32_t c = m.identity[a] ? static_cast<int32_t>(q) : NearestIndex(m, a, static_cast<int32_t>(q));
    offset += c * m.in_stride[a];
  }
  y[i] = x[offset];
}

// The interpolated axes' taps live in named scalars (slot 0..2 chosen by
// selects) rather than in arrays indexed at run time, which would go to
// local memory.
template <typename T>
__global__ void ResizeLinearKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, ResizeMap m) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t rest = i;
  int32_t base = 0;
  int32_t lo0 = 0, lo1 = 0, lo2 = 0, hi0 = 0, hi1 = 0, hi2 = 0;
  float w0 = 0.f, w1 = 0.f, w2 = 0.f;
#pragma unroll
  for (int a = 0; a < kMaxRank; ++a) {
    if (a == m.rank) break;
    const uint32_t q = m.out_stride[a].Div(rest);
    rest -= q * m.out_stride[a].d;
    if (m.slot[a] < 0) {
      base += static_cast<int32_t>(q) * m.in_stride[a];
      continue;
    }
    const double v = Original(m, a, static_cast<int32_t>(q));
    const double fl = floor(v);
    const int32_t last = m.in_dim[a] - 1;
    const int32_t i0 = static_cast<int32_t>(fl);
    const int32_t lo = (i0 < 0 ? 0 : (i0 > last ? last : i0)) * m.in_stride[a];
    const int32_t hi = (i0 + 1 < 0 ? 0 : (i0 + 1 > last ? last : i0 + 1)) * m.in_stride[a];
    const float w = static_cast<float>(v - fl);
    if (m.slot[a] == 0) {
      lo0 = lo, hi0 = hi, w0 = w;
    } else if (m.slot[a] == 1) {
      lo1 = lo, hi1 = hi, w1 = w;
    } else {
      lo2 = lo, hi2 = hi, w2 = w;
    }
  }
  float acc = 0.f;
  const int corners = 1 << m.active_count;
  for (int c = 0; c < corners; ++c) {
    const bool u0 = c & 1, u1 = (c >> 1) & 1, u2 = (c >> 2) & 1;
    const int32_t offset = base + (u0 ? hi0 : lo0) + (u1 ? hi1 : lo1) + (u2 ? hi2 : lo2);
    const float weight = (u0 ? w0 : 1.f - w0) * (u1 ? w1 : 1.f - w1) * (u2 ? w2 : 1.f - w2);
    acc += weight * ToFloat(x[offset]);
  }
  y[i] = FromFloat<T>(acc);
}

ResizeMap MakeMap(const ResizeArgs& args) {
  ResizeMap m{};
  m.rank = args.rank;
  m.coord = args.coord;
  m.nearest = args.nearest;
  SetOutStrides(args.out_dims, args.rank, m.out_stride);
  int64_t stride = 1;
  for (int a = args.rank - 1; a >= 0; --a) {
    m.in_dim[a] = static_cast<int32_t>(args.in_dims[a]);
    m.out_dim[a] = static_cast<int32_t>(args.out_dims[a]);
    m.in_stride[a] = static_cast<int32_t>(stride);
    m.scale[a] = args.scales[a];
    m.identity[a] = ResizeAxisIsIdentity(args, a);
    stride *= args.in_dims[a];
  }
  for (int a = 0; a < args.rank; ++a) {
    m.slot[a] = -1;
    if (!m.identity[a]) m.slot[a] = m.active_count++;
  }
  return m;
}

template <size_t kBytes>
cudaError_t NearestSized(const ResizeMap& m, int64_t n, const void* x, void* y, cudaStream_t s) {
  using T = typename CopyType<kBytes>::type;
  ResizeNearestKernel<T>
      <<<BlocksFor(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), static_cast<uint32_t>(n), m);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchResize(DataType type, const ResizeArgs& args, const void* x, void* y, cudaStream_t stream) {
  if (args.n <= 0) return cudaSuccess;
  const ResizeMap m = MakeMap(args);
  if (args.linear) {
    if (m.active_count > 3) return cudaErrorInvalidValue;
    if (type == DataType::kFloat) {
      ResizeLinearKernel<float><<<BlocksFor(args.n), kThreads, 0, stream>>>(
          static_cast<const float*>(x), static_cast<float*>(y), static_cast<uint32_t>(args.n), m);
      return cudaGetLastError();
    }
    if (type == DataType::kFloat16) {
      ResizeLinearKernel<__half><<<BlocksFor(args.n), kThreads, 0, stream>>>(
          static_cast<const __half*>(x), static_cast<__half*>(y), static_cast<uint32_t>(args.n), m);
      return cudaGetLastError();
    }
    return cudaErrorInvalidValue;
  }
  switch (ElementSize(type)) {
    case 1: return NearestSized<1>(m, args.n, x, y, stream);
    case 2: return NearestSized<2>(m, args.n, x, y, stream);
    case 4: return NearestSized<4>(m, args.n, x, y, stream);
    case 8: return NearestSized<8>(m, args.n, x, y, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace onyx::cuda_ops
