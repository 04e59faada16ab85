// The boundary between the CUDA provider's OpKernel classes (.cc, compiled by
// the host compiler against the framework headers) and its device code (.cu,
// compiled by nvcc, which sees only this header and cuda_common.cuh).
//
//   BroadcastArgs b = MakeBroadcast(out_dims, {a.dims(), b.dims()});  // broadcast.h
//   cudaError_t err = LaunchBinary(BinaryOp::kAdd, DataType::kFloat, b, pa, pb, py, lane.stream);
//   RETURN_IF_ERROR(CheckLaunch(ctx, "Add", err));                      // kernel_util.h
//
// Every Launch* function enqueues work on `stream` and returns at once: it
// never synchronizes and never allocates. It returns cudaGetLastError() after
// its launches (cudaSuccess for empty tensors, where it launches nothing).
// Element counts and every index must be below 2^31 (kMaxElements): the
// callers check with FitsIndex() first, the kernels index in 32 bits.
// Pointers are device pointers. Thread-safe (pure functions of their
// arguments).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "onyx/data_type.h"

namespace onyx::cuda_ops {

inline constexpr int kMaxRank = 8;
inline constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;
inline bool FitsIndex(int64_t n) { return n >= 0 && n <= kMaxElements; }

// ---------------------------------------------------------------- elementwise
// Unary float/half functions; computed in float. alpha/beta per op below.
enum class UnaryOp : int32_t {
  kIdentity,
  kRelu,
  kSigmoid,
  kTanh,
  kErf,
  kExp,
  kLog,
  kSqrt,
  kNeg,
  kAbs,
  kReciprocal,
  kClip,         // min(max(x, alpha), beta)
  kLeakyRelu,    // x < 0 ? alpha * x : x
  kHardSigmoid,  // max(0, min(1, alpha * x + beta))
  kHardSwish,    // x * max(0, min(1, x / 6 + 0.5))
  kSoftplus,     // log(1 + exp(x)), overflow-safe
  kGeluErf,      // 0.5 x (1 + erf(x / sqrt 2))
  kGeluTanh,     // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kSwish,        // x * sigmoid(alpha * x)  (SiLU: alpha = 1)
  kPowScalar,    // x ^ alpha (2, 3, 0.5 and 1 exactly)
  kElu,          // x < 0 ? alpha (exp(x) - 1) : x
  kFloor,
  kCeil,
};

// y[i] = op(x[i]) for i < n; x == y is allowed. type: kFloat or kFloat16.
cudaError_t LaunchUnary(UnaryOp op, DataType type, const void* x, void* y, int64_t n, float alpha, float beta,
                        cudaStream_t stream);

// The epilogue of a convolution or product computed without its bias:
// y[i] = act(y[i] + bias[(i / inner) % channels] + z[i]), in place;
// bias and z may each be null. type: kFloat or kFloat16.
cudaError_t LaunchBiasResidualActivation(DataType type, void* y, const void* bias, const void* z, int64_t n,
                                         int64_t channels, int64_t inner, UnaryOp act, float alpha, float beta,
                                         cudaStream_t stream);

// Collapsed numpy broadcasting of up to three inputs to an output: the output
// dims (rank <= kMaxRank, adjacent dims merged where every input agrees) and
// each input's element strides over them (0 along broadcast dims).
// `contiguous[i]`: input i has the output's shape (strides are row-major);
// `scalar[i]`: input i has one element.
struct BroadcastArgs {
  int32_t rank = 0;
  int64_t n = 0;  // output elements
  int64_t dims[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};
  bool contiguous[3] = {};
  bool scalar[3] = {};
};

enum class BinaryOp : int32_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,  // float/half only
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,
  kMax,
  kMin,
};
constexpr bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEqual && op <= BinaryOp::kGreaterOrEqual; }

// y = a op b with args.strides[0] for a and [1] for b. type (of a and b):
// kFloat, kFloat16, kInt32, kInt64 (kPow: floats only); y has that type, or
// kBool (one byte, 0/1) for comparisons. Integer division truncates toward
// zero; division by zero gives 0 for integers (no trap).
cudaError_t LaunchBinary(BinaryOp op, DataType type, const BroadcastArgs& args, const void* a, const void* b, void* y,
                         cudaStream_t stream);

// y = cond ? x : z broadcast (strides [0] cond, [1] x, [2] z); cond is bool,
// x, z and y have `elem_size` bytes (1, 2, 4 or 8).
cudaError_t LaunchWhere(size_t elem_size, const BroadcastArgs& args, const void* cond, const void* x, const void* z,
                        void* y, cudaStream_t stream);

// ---------------------------------------------------------------------- copies
// y[o] = x[base + sum_k index_k(o) * in_strides[k]] over the output dims:
// serves Transpose, Slice, Expand and broadcast copies. elem_size 1, 2, 4, 8, 16.
struct StridedCopyArgs {
  int32_t rank = 0;
  int64_t n = 0;
  int64_t base = 0;  // element offset into x
  int64_t out_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
};
cudaError_t LaunchStridedCopy(size_t elem_size, const StridedCopyArgs& args, const void* x, void* y,
                              cudaStream_t stream);

// Batched 2-D transpose through shared memory: x [batch, rows, cols] ->
// y [batch, cols, rows]. elem_size 1, 2, 4, 8.
cudaError_t LaunchTranspose2D(size_t elem_size, int64_t batch, int64_t rows, int64_t cols, const void* x, void* y,
                              cudaStream_t stream);

// Zero padding: y [out_dims] from x [in_dims] placed at offset pad_begin
// (every pad >= 0). elem_size 1, 2, 4, 8.
struct PadArgs {
  int32_t rank = 0;
  int64_t n = 0;  // output elements
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t pad_begin[kMaxRank] = {};
};
cudaError_t LaunchPad(size_t elem_size, const PadArgs& args, const void* x, void* y, cudaStream_t stream);

// Writes n <= kMaxRank int64 values given by value (Shape's output) without a
// host buffer that must outlive the copy.
cudaError_t LaunchFillInt64(const int64_t* values, int32_t n, int64_t* y, cudaStream_t stream);

// ------------------------------------------------------------------- gather
// y [outer, num_indices, inner] = x [outer, axis_dim, inner] gathered along the
// middle axis; negative indices count from the end, out-of-range ones give
// zeros (a kernel cannot fail). index_type kInt32 or kInt64; elem_size 1..8.
cudaError_t LaunchGather(size_t elem_size, DataType index_type, const void* x, const void* indices, void* y,
                         int64_t outer, int64_t axis_dim, int64_t num_indices, int64_t inner, cudaStream_t stream);

// -------------------------------------------------------------------- cast
// y[i] = (to) x[i] for from/to in {kFloat, kFloat16, kBFloat16, kDouble, kInt8, kUint8, kInt32,
// kInt64, kBool}; float to integer truncates toward zero,
// anything to bool is x != 0; out-of-range values are implementation-defined
// (as in C++ and ONNX Runtime).
bool CastSupported(DataType from, DataType to);
cudaError_t LaunchCast(DataType from, DataType to, const void* x, void* y, int64_t n, cudaStream_t stream);

// ------------------------------------------------------------------ reduce
enum class ReduceOp : int32_t { kSum, kMean, kMax, kMin, kSumSquare };
// y [outer, inner] = reduce x [outer, r, inner] over the middle axis, in
// float. r == 0 gives 0 for sums, NaN for the mean, -inf/+inf for max/min.
// type: kFloat or kFloat16.
cudaError_t LaunchReduce(ReduceOp op, DataType type, const void* x, void* y, int64_t outer, int64_t r, int64_t inner,
                         cudaStream_t stream);

// Any other set of reduced axes: y[o] = reduce over j < reduced.n of
// x[kept(o) + reduced(j)], where kept maps an output index and reduced an
// index of the reduced sub-space to element offsets (StridedCopyArgs with
// base 0). A thread per output element.
cudaError_t LaunchReduceStrided(ReduceOp op, DataType type, const StridedCopyArgs& kept, const StridedCopyArgs& reduced,
                                const void* x, void* y, cudaStream_t stream);

// ----------------------------------------------------------------- softmax
// Softmax (log_softmax: LogSoftmax) of x [outer, d, inner] along the middle
// axis, in float. type: kFloat or kFloat16.
cudaError_t LaunchSoftmax(DataType type, const void* x, void* y, int64_t outer, int64_t d, int64_t inner,
                          bool log_softmax, cudaStream_t stream);

// -------------------------------------------------------------- layer norm
// Each of `rows` rows of `cols` elements: y = (x - mean) / sqrt(var + eps) *
// scale + bias (bias may be null), mean and variance in float (two passes).
// mean / inv_std (float, one per row) are written when non-null. type (of x,
// scale, bias, y): kFloat or kFloat16.
cudaError_t LaunchLayerNorm(DataType type, const void* x, const void* scale, const void* bias, void* y, float* mean,
                            float* inv_std, int64_t rows, int64_t cols, float epsilon, cudaStream_t stream);

// -------------------------------------------------------------------- pool
enum class PoolOp : int32_t { kMax, kAverage };
// x [nc, in...] -> y [nc, out...] for 1 to 3 spatial dims, right-aligned in
// the arrays (a 2-D pool fills entries 1 and 2; unused entries keep the
// defaults: size 1, stride 1, no padding). Windows are clipped to the
// input; Average divides by the window clipped to the input, or, with
// count_include_pad, clipped to the padded input. A window with no input
// element gives 0 (average) or -inf (max).
struct PoolArgs {
  int32_t spatial = 0;
  int64_t nc = 0;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {};
  int64_t pad_end[3] = {};
  bool count_include_pad = false;
};
cudaError_t LaunchPool(PoolOp op, DataType type, const PoolArgs& args, const void* x, void* y, cudaStream_t stream);

// ------------------------------------------------------------------ resize
enum class ResizeCoordMode : int32_t {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kHalfPixelSymmetric,
};
enum class ResizeNearestMode : int32_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
// x [in_dims] -> y [out_dims], each axis mapped independently with `scales`
// (output / input; for the coordinate transform). linear: at most 3 axes
// with in != out or scale != 1 (2^k taps); nearest: any. type: kFloat or
// kFloat16 (linear), any 1/2/4/8-byte type (nearest).
struct ResizeArgs {
  int32_t rank = 0;
  int64_t n = 0;
  int64_t in_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  double scales[kMaxRank] = {};
  bool linear = false;
  ResizeCoordMode coord = ResizeCoordMode::kHalfPixel;
  ResizeNearestMode nearest = ResizeNearestMode::kRoundPreferFloor;
};
// True when axis a of a resize maps output coordinates to the same input
// ones (no interpolation): the same size and scale 1, except under
// tf_half_pixel_for_nn, which shifts every coordinate by half a pixel.
inline bool ResizeAxisIsIdentity(const ResizeArgs& args, int a) {
  return args.in_dims[a] == args.out_dims[a] && args.scales[a] == 1.0 &&
         args.coord != ResizeCoordMode::kTfHalfPixelForNn;
}
cudaError_t LaunchResize(DataType type, const ResizeArgs& args, const void* x, void* y, cudaStream_t stream);

}  // namespace onyx::cuda_ops
