// Cast between float, half, bfloat16, double, int8, uint8, int32, int64 and
// bool. Conversions go through the widest natural type: floats through
// float (double through double), integers directly; to bool is x != 0.
#include <type_traits>

#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

template <typename T>
__device__ __forceinline__ double Widen(T x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else {
    return static_cast<double>(x);
  }
}

template <typename From, typename To>
__device__ __forceinline__ To Convert(From x) {
  if constexpr (std::is_same_v<From, To>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return Widen(x) != 0.0;
  } else if constexpr (std::is_same_v<To, __half>) {
    if constexpr (std::is_same_v<From, double>) return __double2half(x);
    return __float2half_rn(static_cast<float>(Widen(x)));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    if constexpr (std::is_same_v<From, double>) return __double2bfloat16(x);
    return __float2bfloat16_rn(static_cast<float>(Widen(x)));
  } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
    return static_cast<To>(x);  // wraps, as C++ and ONNX Runtime do
  } else if constexpr (std::is_same_v<From, double> || std::is_same_v<To, double>) {
    return static_cast<To>(static_cast<double>(Widen(x)));
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(x);  // integer or bool to float
  } else {
    return static_cast<To>(static_cast<float>(Widen(x)));  // float, half, bf16 to integer: truncates
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* __restrict__ x, To* __restrict__ y, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Convert<From, To>(x[i]);
}

template <typename From, typename To>
cudaError_t CastTyped(const void* x, void* y, int64_t n, cudaStream_t s) {
  CastKernel<From, To>
      <<<BlocksFor(n), kThreads, 0, s>>>(static_cast<const From*>(x), static_cast<To*>(y), static_cast<uint32_t>(n));
  return cudaGetLastError();
}

// Calls fn(tag) with a value of the C++ type of `type`; false when unsupported.
template <typename Fn>
bool WithType(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::kFloat: fn(float{}); return true;
    case DataType::kFloat16: fn(__half{}); return true;
    case DataType::kBFloat16: fn(__nv_bfloat16{}); return true;
    case DataType::kDouble: fn(double{}); return true;
    case DataType::kInt8: fn(int8_t{}); return true;
    case DataType::kUint8: fn(uint8_t{}); return true;
    case DataType::kInt32: fn(int32_t{}); return true;
    case DataType::kInt64: fn(int64_t{}); return true;
    case DataType::kBool: fn(bool{}); return true;
    default: return false;
  }
}

}  // namespace

bool CastSupported(DataType from, DataType to) {
  auto noop = [](auto) {};
  return WithType(from, noop) && WithType(to, noop);
}

cudaError_t LaunchCast(DataType from, DataType to, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  WithType(from,
           [&](auto f) { WithType(to, [&](auto t) { err = CastTyped<decltype(f), decltype(t)>(x, y, n, stream); }); });
  return err;
}

}  // namespace onyx::cuda_ops
