// MaxPool and AveragePool over 1 to 3 spatial dims: a thread per output
// element walks its window (clipped to the input), accumulating in float.
#include <cmath>

#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

struct PoolGeometry {
  FastDivmod out[3];  // output spatial dims (unused ones are 1)
  int32_t in[3];
  int32_t kernel[3];
  int32_t stride[3];
  int32_t dilation[3];
  int32_t pad_begin[3];
  int32_t pad_end[3];
  bool count_include_pad;
};

template <typename T, PoolOp kOp>
__global__ void PoolKernel(const T* __restrict__ x, T* __restrict__ y, uint32_t n, PoolGeometry g) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // i = ((nc * out0 + o0) * out1 + o1) * out2 + o2
  uint32_t rest = i;
  int32_t o[3];
#pragma unroll
  for (int d = 2; d >= 0; --d) {
    const uint32_t q = g.out[d].Div(rest);
    o[d] = static_cast<int32_t>(rest - q * g.out[d].d);
    rest = q;
  }
  const T* plane = x + rest * static_cast<uint32_t>(g.in[0] * g.in[1] * g.in[2]);
  int32_t start[3], end[3];
  int32_t padded = 1;  // window size clipped to the padded input (count_include_pad)
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    const int32_t s = o[d] * g.stride[d] - g.pad_begin[d];
    const int32_t e = s + (g.kernel[d] - 1) * g.dilation[d] + 1;
    const int32_t hi = g.in[d] + g.pad_end[d];
    padded *= (min(e, hi) - s + g.dilation[d] - 1) / g.dilation[d];
    // First and one-past-last window taps inside the input.
    start[d] = s < 0 ? s + ((-s + g.dilation[d] - 1) / g.dilation[d]) * g.dilation[d] : s;
    end[d] = min(e, g.in[d]);
  }
  float acc = kOp == PoolOp::kMax ? -INFINITY : 0.f;
  int32_t count = 0;
  for (int32_t a = start[0]; a < end[0]; a += g.dilation[0]) {
    for (int32_t b = start[1]; b < end[1]; b += g.dilation[1]) {
      const T* row = plane + (a * g.in[1] + b) * g.in[2];
      for (int32_t c = start[2]; c < end[2]; c += g.dilation[2]) {
        const float v = ToFloat(row[c]);
        if constexpr (kOp == PoolOp::kMax) {
          acc = MaxOp()(acc, v);
        } else {
          acc += v;
        }
        ++count;
      }
    }
  }
  if constexpr (kOp == PoolOp::kAverage) {
    const int32_t divisor = g.count_include_pad ? padded : count;
    acc = divisor > 0 ? acc / static_cast<float>(divisor) : 0.f;
  }
  y[i] = FromFloat<T>(acc);
}

template <typename T>
cudaError_t PoolTyped(PoolOp op, const PoolArgs& args, const void* x, void* y, cudaStream_t s) {
  PoolGeometry g;
  int64_t n = args.nc;
  for (int d = 0; d < 3; ++d) {
    g.out[d] = FastDivmod(args.out[d]);
    g.in[d] = static_cast<int32_t>(args.in[d]);
    g.kernel[d] = static_cast<int32_t>(args.kernel[d]);
    g.stride[d] = static_cast<int32_t>(args.stride[d]);
    g.dilation[d] = static_cast<int32_t>(args.dilation[d]);
    g.pad_begin[d] = static_cast<int32_t>(args.pad_begin[d]);
    g.pad_end[d] = static_cast<int32_t>(args.pad_end[d]);
    n *= args.out[d];
  }
  g.count_include_pad = args.count_include_pad;
  if (n <= 0) return cudaSuccess;
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  if (op == PoolOp::kMax) {
    PoolKernel<T, PoolOp::kMax><<<BlocksFor(n), kThreads, 0, s>>>(xt, yt, static_cast<uint32_t>(n), g);
  } else {
    PoolKernel<T, PoolOp::kAverage><<<BlocksFor(n), kThreads, 0, s>>>(xt, yt, static_cast<uint32_t>(n), g);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchPool(PoolOp op, DataType type, const PoolArgs& args, const void* x, void* y, cudaStream_t stream) {
  if (type == DataType::kFloat) return PoolTyped<float>(op, args, x, y, stream);
  if (type == DataType::kFloat16) return PoolTyped<__half>(op, args, x, y, stream);
  return cudaErrorInvalidValue;
}

}  // namespace onyx::cuda_ops
