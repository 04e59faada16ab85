// Element-wise kernels: unary functions, numpy-broadcasting binary ops and
// comparisons, the bias/residual/activation epilogue, Where.
//
// Contiguous operands take 16-byte vector loads and stores when every
// pointer is aligned (the tail, under one vector, runs in a second launch);
// broadcast operands go through a BroadcastMap (one fast division per
// collapsed dimension). Float and half compute in float.
#include <cmath>
#include <type_traits>

#include "providers/cuda/kernels/cuda_common.cuh"

namespace onyx::cuda_ops {
namespace {

template <UnaryOp kOp>
__device__ __forceinline__ float Unary(float x, float a, float b) {
  if constexpr (kOp == UnaryOp::kIdentity) return x;
  if constexpr (kOp == UnaryOp::kRelu) return x < 0.f ? 0.f : x;
  if constexpr (kOp == UnaryOp::kSigmoid) return 1.f / (1.f + expf(-x));
  if constexpr (kOp == UnaryOp::kTanh) return tanhf(x);
  if constexpr (kOp == UnaryOp::kErf) return erff(x);
  if constexpr (kOp == UnaryOp::kExp) return expf(x);
  if constexpr (kOp == UnaryOp::kLog) return logf(x);
  if constexpr (kOp == UnaryOp::kSqrt) return sqrtf(x);
  if constexpr (kOp == UnaryOp::kNeg) return -x;
  if constexpr (kOp == UnaryOp::kAbs) return fabsf(x);
  if constexpr (kOp == UnaryOp::kReciprocal) return 1.f / x;
  if constexpr (kOp == UnaryOp::kClip) return x < a ? a : (x > b ? b : x);  // NaN stays NaN
  if constexpr (kOp == UnaryOp::kLeakyRelu) return x < 0.f ? a * x : x;
  if constexpr (kOp == UnaryOp::kHardSigmoid) return fminf(1.f, fmaxf(0.f, a * x + b));
  if constexpr (kOp == UnaryOp::kHardSwish) return x * fminf(1.f, fmaxf(0.f, x * (1.f / 6.f) + 0.5f));
  if constexpr (kOp == UnaryOp::kSoftplus) return fmaxf(x, 0.f) + log1pf(expf(-fabsf(x)));
  if constexpr (kOp == UnaryOp::kGeluErf) return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
  if constexpr (kOp == UnaryOp::kGeluTanh) {
    return 0.5f * x * (1.f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  }
  if constexpr (kOp == UnaryOp::kSwish) return x / (1.f + expf(-a * x));
  if constexpr (kOp == UnaryOp::kPowScalar) {
    if (a == 2.f) return x * x;
    if (a == 3.f) return x * x * x;
    if (a == 0.5f) return sqrtf(x);
    if (a == 1.f) return x;
    return powf(x, a);
  }
  if constexpr (kOp == UnaryOp::kElu) return x < 0.f ? a * expm1f(x) : x;
  if constexpr (kOp == UnaryOp::kFloor) return floorf(x);
  if constexpr (kOp == UnaryOp::kCeil) return ceilf(x);
  return x;
}

// x == y is allowed (in place; MayInplace), so neither kernel uses
// __restrict__: each element is read and then written by one thread.
template <typename T, UnaryOp kOp>
__global__ void UnaryKernel(const T* x, T* y, uint32_t n, float a, float b) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = FromFloat<T>(Unary<kOp>(ToFloat(x[i]), a, b));
}

template <typename T, UnaryOp kOp, int N>
__global__ void UnaryVecKernel(const T* x, T* y, uint32_t vectors, float a, float b) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= vectors) return;
  Vec<T, N> v = reinterpret_cast<const Vec<T, N>*>(x)[i];
#pragma unroll
  for (int k = 0; k < N; ++k) v.v[k] = FromFloat<T>(Unary<kOp>(ToFloat(v.v[k]), a, b));
  reinterpret_cast<Vec<T, N>*>(y)[i] = v;
}

template <typename T, UnaryOp kOp>
cudaError_t UnaryTyped(const void* xv, void* yv, int64_t n, float a, float b, cudaStream_t stream) {
  constexpr int N = 16 / sizeof(T);
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  int64_t done = 0;
  if (Aligned(x, 16) && Aligned(y, 16) && n >= N) {
    const int64_t vectors = n / N;
    UnaryVecKernel<T, kOp, N><<<BlocksFor(vectors), kThreads, 0, stream>>>(x, y, static_cast<uint32_t>(vectors), a, b);
    done = vectors * N;
  }
  if (done < n) {
    UnaryKernel<T, kOp>
        <<<BlocksFor(n - done), kThreads, 0, stream>>>(x + done, y + done, static_cast<uint32_t>(n - done), a, b);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t UnaryDispatch(UnaryOp op, const void* x, void* y, int64_t n, float a, float b, cudaStream_t s) {
  switch (op) {
#define ONYX_UNARY_CASE(name) \
  case UnaryOp::name: return UnaryTyped<T, UnaryOp::name>(x, y, n, a, b, s);
    ONYX_UNARY_CASE(kIdentity)
    ONYX_UNARY_CASE(kRelu)
    ONYX_UNARY_CASE(kSigmoid)
    ONYX_UNARY_CASE(kTanh)
    ONYX_UNARY_CASE(kErf)
    ONYX_UNARY_CASE(kExp)
    ONYX_UNARY_CASE(kLog)
    ONYX_UNARY_CASE(kSqrt)
    ONYX_UNARY_CASE(kNeg)
    ONYX_UNARY_CASE(kAbs)
    ONYX_UNARY_CASE(kReciprocal)
    ONYX_UNARY_CASE(kClip)
    ONYX_UNARY_CASE(kLeakyRelu)
    ONYX_UNARY_CASE(kHardSigmoid)
    ONYX_UNARY_CASE(kHardSwish)
    ONYX_UNARY_CASE(kSoftplus)
    ONYX_UNARY_CASE(kGeluErf)
    ONYX_UNARY_CASE(kGeluTanh)
    ONYX_UNARY_CASE(kSwish)
    ONYX_UNARY_CASE(kPowScalar)
    ONYX_UNARY_CASE(kElu)
    ONYX_UNARY_CASE(kFloor)
    ONYX_UNARY_CASE(kCeil)
#undef ONYX_UNARY_CASE
  }
  return cudaErrorInvalidValue;
}

// ------------------------------------------------------------------ binary

template <BinaryOp kOp, typename T>
struct BinaryResult {
  using type = T;
};
#define ONYX_COMPARISON_RESULT(op)       \
  template <typename T>                  \
  struct BinaryResult<BinaryOp::op, T> { \
    using type = bool;                   \
  };
ONYX_COMPARISON_RESULT(kEqual)
ONYX_COMPARISON_RESULT(kLess)
ONYX_COMPARISON_RESULT(kGreater)
ONYX_COMPARISON_RESULT(kLessOrEqual)
ONYX_COMPARISON_RESULT(kGreaterOrEqual)
#undef ONYX_COMPARISON_RESULT

template <BinaryOp kOp>
inline constexpr bool kIsComparison = kOp >= BinaryOp::kEqual&& kOp <= BinaryOp::kGreaterOrEqual;

// Floats (computed in float: half inputs are widened).
template <BinaryOp kOp>
__device__ __forceinline__ float BinaryFloat(float a, float b) {
  if constexpr (kOp == BinaryOp::kAdd) return a + b;
  if constexpr (kOp == BinaryOp::kSub) return a - b;
  if constexpr (kOp == BinaryOp::kMul) return a * b;
  if constexpr (kOp == BinaryOp::kDiv) return a / b;
  if constexpr (kOp == BinaryOp::kPow) {
    if (b == 2.f) return a * a;
    if (b == 0.5f) return sqrtf(a);
    return powf(a, b);
  }
  if constexpr (kOp == BinaryOp::kMax) return MaxOp()(a, b);
  if constexpr (kOp == BinaryOp::kMin) return MinOp()(a, b);
  return 0.f;
}

template <BinaryOp kOp, typename T>
__device__ __forceinline__ bool Compare(T a, T b) {
  if constexpr (kOp == BinaryOp::kEqual) return a == b;
  if constexpr (kOp == BinaryOp::kLess) return a < b;
  if constexpr (kOp == BinaryOp::kGreater) return a > b;
  if constexpr (kOp == BinaryOp::kLessOrEqual) return a <= b;
  if constexpr (kOp == BinaryOp::kGreaterOrEqual) return a >= b;
  return false;
}

template <BinaryOp kOp, typename T>
__device__ __forceinline__ typename BinaryResult<kOp, T>::type Binary(T a, T b) {
  if constexpr (kIsComparison<kOp>) {
    if constexpr (std::is_same_v<T, __half>) {
      return Compare<kOp>(__half2float(a), __half2float(b));
    } else {
      return Compare<kOp>(a, b);
    }
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, __half>) {
    return FromFloat<T>(BinaryFloat<kOp>(ToFloat(a), ToFloat(b)));
  } else {  // int32_t, int64_t
    if constexpr (kOp == BinaryOp::kAdd) return a + b;
    if constexpr (kOp == BinaryOp::kSub) return a - b;
    if constexpr (kOp == BinaryOp::kMul) return a * b;
    if constexpr (kOp == BinaryOp::kDiv) return b == 0 ? T(0) : a / b;
    if constexpr (kOp == BinaryOp::kMax) return a < b ? b : a;
    if constexpr (kOp == BinaryOp::kMin) return b < a ? b : a;
    return T(0);
  }
}

// Contiguous operands; a scalar operand (kAScalar / kBScalar) is read once.
// Elementwise in place (y aliasing a contiguous input) is allowed.
template <BinaryOp kOp, typename T, bool kAScalar, bool kBScalar, int N>
__global__ void BinaryVecKernel(const T* a, const T* b, typename BinaryResult<kOp, T>::type* y, uint32_t vectors) {
  using Out = typename BinaryResult<kOp, T>::type;
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= vectors) return;
  Vec<T, N> va, vb;
  if constexpr (kAScalar) {
#pragma unroll
    for (int k = 0; k < N; ++k) va.v[k] = a[0];
  } else {
    va = reinterpret_cast<const Vec<T, N>*>(a)[i];
  }
  if constexpr (kBScalar) {
#pragma unroll
    for (int k = 0; k < N; ++k) vb.v[k] = b[0];
  } else {
    vb = reinterpret_cast<const Vec<T, N>*>(b)[i];
  }
  Vec<Out, N> out;
#pragma unroll
  for (int k = 0; k < N; ++k) out.v[k] = Binary<kOp>(va.v[k], vb.v[k]);
  reinterpret_cast<Vec<Out, N>*>(y)[i] = out;
}

template <BinaryOp kOp, typename T, bool kAScalar, bool kBScalar>
__global__ void BinaryFlatKernel(const T* a, const T* b, typename BinaryResult<kOp, T>::type* y, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Binary<kOp>(a[kAScalar ? 0 : i], b[kBScalar ? 0 : i]);
}

template <BinaryOp kOp, typename T>
__global__ void BinaryBroadcastKernel(const T* __restrict__ a, const T* __restrict__ b,
                                      typename BinaryResult<kOp, T>::type* __restrict__ y, uint32_t n,
                                      BroadcastMap<2> map) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int32_t offset[2];
  map.Offsets(i, offset);
  y[i] = Binary<kOp>(a[offset[0]], b[offset[1]]);
}

template <BinaryOp kOp, typename T, bool kAScalar, bool kBScalar>
cudaError_t BinaryFlat(const T* a, const T* b, typename BinaryResult<kOp, T>::type* y, int64_t n, cudaStream_t stream) {
  using Out = typename BinaryResult<kOp, T>::type;
  constexpr int N = 16 / sizeof(T);
  int64_t done = 0;
  const bool aligned = (kAScalar || Aligned(a, 16)) && (kBScalar || Aligned(b, 16)) && Aligned(y, sizeof(Out) * N);
  if (aligned && n >= N) {
    const int64_t vectors = n / N;
    BinaryVecKernel<kOp, T, kAScalar, kBScalar, N>
        <<<BlocksFor(vectors), kThreads, 0, stream>>>(a, b, y, static_cast<uint32_t>(vectors));
    done = vectors * N;
  }
  if (done < n) {
    BinaryFlatKernel<kOp, T, kAScalar, kBScalar><<<BlocksFor(n - done), kThreads, 0, stream>>>(
        kAScalar ? a : a + done, kBScalar ? b : b + done, y + done, static_cast<uint32_t>(n - done));
  }
  return cudaGetLastError();
}

template <BinaryOp kOp, typename T>
cudaError_t BinaryTyped(const BroadcastArgs& args, const void* av, const void* bv, void* yv, cudaStream_t stream) {
  using Out = typename BinaryResult<kOp, T>::type;
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  Out* y = static_cast<Out*>(yv);
  const int64_t n = args.n;
  const bool a_flat = args.contiguous[0], b_flat = args.contiguous[1];
  if (a_flat && b_flat) return BinaryFlat<kOp, T, false, false>(a, b, y, n, stream);
  if (a_flat && args.scalar[1]) return BinaryFlat<kOp, T, false, true>(a, b, y, n, stream);
  if (args.scalar[0] && b_flat) return BinaryFlat<kOp, T, true, false>(a, b, y, n, stream);
  BinaryBroadcastKernel<kOp, T>
      <<<BlocksFor(n), kThreads, 0, stream>>>(a, b, y, static_cast<uint32_t>(n), MakeBroadcastMap<2>(args));
  return cudaGetLastError();
}

template <BinaryOp kOp>
cudaError_t BinaryForOp(DataType type, const BroadcastArgs& args, const void* a, const void* b, void* y,
                        cudaStream_t s) {
  switch (type) {
    case DataType::kFloat: return BinaryTyped<kOp, float>(args, a, b, y, s);
    case DataType::kFloat16: return BinaryTyped<kOp, __half>(args, a, b, y, s);
    case DataType::kInt32:
      if constexpr (kOp != BinaryOp::kPow) return BinaryTyped<kOp, int32_t>(args, a, b, y, s);
      break;
    case DataType::kInt64:
      if constexpr (kOp != BinaryOp::kPow) return BinaryTyped<kOp, int64_t>(args, a, b, y, s);
      break;
    default: break;
  }
  return cudaErrorInvalidValue;
}

// ---------------------------------------------------------------- epilogue

template <typename T, UnaryOp kAct>
__global__ void BiasResidualActivationKernel(T* y, const T* __restrict__ bias, const T* __restrict__ z, uint32_t n,
                                             FastDivmod inner, FastDivmod channels, float a, float b) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = ToFloat(y[i]);
  if (bias != nullptr) v += ToFloat(bias[channels.Mod(inner.Div(i))]);
  if (z != nullptr) v += ToFloat(z[i]);
  y[i] = FromFloat<T>(Unary<kAct>(v, a, b));
}

template <typename T>
cudaError_t EpilogueTyped(UnaryOp act, void* yv, const void* biasv, const void* zv, int64_t n, int64_t channels,
                          int64_t inner, float a, float b, cudaStream_t s) {
  T* y = static_cast<T*>(yv);
  const T* bias = static_cast<const T*>(biasv);
  const T* z = static_cast<const T*>(zv);
  const FastDivmod fi(inner), fc(channels);
  const unsigned blocks = BlocksFor(n);
  const uint32_t count = static_cast<uint32_t>(n);
  switch (act) {
#define ONYX_EPILOGUE_CASE(name)                                                                                 \
  case UnaryOp::name:                                                                                            \
    BiasResidualActivationKernel<T, UnaryOp::name><<<blocks, kThreads, 0, s>>>(y, bias, z, count, fi, fc, a, b); \
    return cudaGetLastError();
    ONYX_EPILOGUE_CASE(kIdentity)
    ONYX_EPILOGUE_CASE(kRelu)
    ONYX_EPILOGUE_CASE(kLeakyRelu)
    ONYX_EPILOGUE_CASE(kClip)
    ONYX_EPILOGUE_CASE(kSigmoid)
    ONYX_EPILOGUE_CASE(kHardSigmoid)
    ONYX_EPILOGUE_CASE(kHardSwish)
    ONYX_EPILOGUE_CASE(kSwish)
    ONYX_EPILOGUE_CASE(kTanh)
    ONYX_EPILOGUE_CASE(kGeluErf)
    ONYX_EPILOGUE_CASE(kGeluTanh)
#undef ONYX_EPILOGUE_CASE
    default: return cudaErrorInvalidValue;
  }
}

// -------------------------------------------------------------------- where

template <typename T>
__global__ void WhereKernel(const bool* __restrict__ cond, const T* __restrict__ x, const T* __restrict__ z,
                            T* __restrict__ y, uint32_t n, BroadcastMap<3> map) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int32_t offset[3];
  map.Offsets(i, offset);
  y[i] = cond[offset[0]] ? x[offset[1]] : z[offset[2]];
}

template <size_t kBytes>
cudaError_t WhereSized(const BroadcastArgs& args, const void* cond, const void* x, const void* z, void* y,
                       cudaStream_t s) {
  using T = typename CopyType<kBytes>::type;
  WhereKernel<T><<<BlocksFor(args.n), kThreads, 0, s>>>(static_cast<const bool*>(cond), static_cast<const T*>(x),
                                                        static_cast<const T*>(z), static_cast<T*>(y),
                                                        static_cast<uint32_t>(args.n), MakeBroadcastMap<3>(args));
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchUnary(UnaryOp op, DataType type, const void* x, void* y, int64_t n, float alpha, float beta,
                        cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (type == DataType::kFloat) return UnaryDispatch<float>(op, x, y, n, alpha, beta, stream);
  if (type == DataType::kFloat16) return UnaryDispatch<__half>(op, x, y, n, alpha, beta, stream);
  return cudaErrorInvalidValue;
}

cudaError_t LaunchBiasResidualActivation(DataType type, void* y, const void* bias, const void* z, int64_t n,
                                         int64_t channels, int64_t inner, UnaryOp act, float alpha, float beta,
                                         cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (bias == nullptr && z == nullptr) return LaunchUnary(act, type, y, y, n, alpha, beta, stream);
  if (type == DataType::kFloat) return EpilogueTyped<float>(act, y, bias, z, n, channels, inner, alpha, beta, stream);
  if (type == DataType::kFloat16) {
    return EpilogueTyped<__half>(act, y, bias, z, n, channels, inner, alpha, beta, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchBinary(BinaryOp op, DataType type, const BroadcastArgs& args, const void* a, const void* b, void* y,
                         cudaStream_t stream) {
  if (args.n <= 0) return cudaSuccess;
  switch (op) {
#define ONYX_BINARY_CASE(name) \
  case BinaryOp::name: return BinaryForOp<BinaryOp::name>(type, args, a, b, y, stream);
    ONYX_BINARY_CASE(kAdd)
    ONYX_BINARY_CASE(kSub)
    ONYX_BINARY_CASE(kMul)
    ONYX_BINARY_CASE(kDiv)
    ONYX_BINARY_CASE(kPow)
    ONYX_BINARY_CASE(kEqual)
    ONYX_BINARY_CASE(kLess)
    ONYX_BINARY_CASE(kGreater)
    ONYX_BINARY_CASE(kLessOrEqual)
    ONYX_BINARY_CASE(kGreaterOrEqual)
    ONYX_BINARY_CASE(kMax)
    ONYX_BINARY_CASE(kMin)
#undef ONYX_BINARY_CASE
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchWhere(size_t elem_size, const BroadcastArgs& args, const void* cond, const void* x, const void* z,
                        void* y, cudaStream_t stream) {
  if (args.n <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return WhereSized<1>(args, cond, x, z, y, stream);
    case 2: return WhereSized<2>(args, cond, x, z, y, stream);
    case 4: return WhereSized<4>(args, cond, x, z, y, stream);
    case 8: return WhereSized<8>(args, cond, x, z, y, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace onyx::cuda_ops
