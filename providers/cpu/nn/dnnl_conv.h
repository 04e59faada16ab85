// DnnlConvolution: a float convolution (1 to 3 spatial dims, any group count,
// depthwise included) run by oneDNN's convolution primitive.
//
//   ASSIGN_OR_RETURN(auto conv, DnnlConvolution::Create(attrs, group, weights, bias, post_ops));
//   RETURN_IF_ERROR(conv->Run(x, residual_or_null, y));   // y: [N, M, out...], row-major
//
// Activations arrive and leave in the caller's layout: plain NCHW-style
// (channels first, any rank) or NHWC (channels last, 2 spatial dims, what the
// layout pass hands to com.onyx NhwcConv). With channels first the primitive
// chooses its own activation layout (format_tag::any) and is wrapped in
// reorders when it prefers another; with channels last it is asked for NHWC
// itself, the layout oneDNN's AVX-512 convolutions run natively, so nothing is
// reordered. Weights are reordered into the primitive's layout once and
// shared with every kernel packing the same bytes the same way
// (packed_weights.h: a model's bucket sessions keep one copy). Bias, the residual sum and the
// activation run as post-ops inside the primitive: y = act(conv(x) + b + z),
// except Sigmoid and Silu (Swish with alpha 1), which onyx's vector math
// applies to y right after it, faster than oneDNN's.
// Primitives are compiled once per input shape and thread count (at creation
// when the shape is known, else on the first run of that shape) and cached.
// Thread-safe: Run may be called concurrently; each call uses its own
// scratch memory.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "framework/op_kernel.h"
#include "onyx/tensor.h"
#include "providers/cpu/nn/conv_attributes.h"

namespace onyx {

// An activation applied to the convolution's result, as a oneDNN post-op.
struct ConvActivation {
  enum class Kind { kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kSwish, kTanh };
  Kind kind = Kind::kNone;
  float alpha = 0.f;  // LeakyRelu slope, Clip min, HardSigmoid alpha, Swish beta
  float beta = 0.f;   // Clip max, HardSigmoid beta
};

// How the caller lays out X, Z and Y.
enum class ConvLayout {
  kChannelsFirst,  // [N, C, d...]
  kChannelsLast,   // [N, H, W, C]
};

struct ConvPostOps {
  bool residual = false;  // adds Z, of the output's shape, before the activation
  ConvActivation activation;
};

// Whether a convolution of this shape runs faster by Winograd's algorithm
// (oneDNN's F(4x4, 3x3) / F(2x2, 3x3), AVX-512 only) than directly at
// `threads` intra-op threads, at a memory cost it can carry: 3x3, stride 1,
// undilated, ungrouped, with enough channels, work per thread, and pixels
// per image for its 4x larger transformed weights. Its results differ from
// the direct ones by rounding only, larger than direct's (the transforms
// scale terms up to ~10x): within 1e-4 of 1 + |y| in the tests.
inline constexpr int64_t kWinogradMinChannels = 48;
inline constexpr double kWinogradMinMacsPerThread = 16e6;
inline constexpr int64_t kWinogradMaxWeightsPerActivation = 4;
bool WinogradPays(const ConvShape& s, int64_t group, int threads);

class DnnlConvolution {
 public:
  // `weights` is [M, C/group, k...] float (kept by reference count, never
  // copied); `bias` is [M] or nullptr.
  // `known_input` fixes an input shape (in `layout`) to compile for now ({} =
  // none).
  // UNIMPLEMENTED when oneDNN has no primitive for the case (the caller keeps
  // its own path); INVALID_ARGUMENT for shapes that do not fit.
  static absl::StatusOr<std::unique_ptr<DnnlConvolution>> Create(const ConvAttributes& attrs, int64_t group,
                                                                 const Tensor& weights, const Tensor* bias,
                                                                 const ConvPostOps& post_ops, const Dims& known_input,
                                                                 ConvLayout layout = ConvLayout::kChannelsFirst);
  ~DnnlConvolution();

  // Computes y from x (float, in the layout) and, with a residual post-op, z
  // (float, y's shape). y must already have the output's shape.
  absl::Status Run(const Tensor& x, const Tensor* z, Tensor& y) const;

  // The output shape for input dims `x` (both in the layout), or
  // INVALID_ARGUMENT naming the shapes.
  absl::StatusOr<Dims> OutputDims(absl::Span<const int64_t> x) const;

  // The oneDNN implementation that runs input dims `x` at the current
  // intra-op thread count (e.g. "brgconv:avx512_core",
  // "jit_wino_4x3:avx512_core"), compiling it if needed.
  absl::StatusOr<std::string> ImplementationFor(absl::Span<const int64_t> x) const;

  struct Compiled;

 private:
  DnnlConvolution(const ConvAttributes& attrs, int64_t group, const Tensor& weights, const Tensor* bias,
                  const ConvPostOps& post_ops, ConvLayout layout);
  // `x` in the caller's layout, as channels-first dims.
  absl::StatusOr<Dims> ChannelsFirst(absl::Span<const int64_t> x) const;
  absl::StatusOr<std::shared_ptr<const Compiled>> CompiledFor(absl::Span<const int64_t> x) const;
  absl::StatusOr<std::shared_ptr<const Compiled>> Compile(absl::Span<const int64_t> x) const;

  ConvAttributes attrs_;
  int64_t group_;
  Tensor weights_;
  Tensor bias_;
  ConvPostOps post_ops_;
  ConvLayout layout_;
  mutable absl::Mutex mu_;
  // By (input dims, intra-op threads).
  mutable std::map<std::pair<Dims, int>, std::shared_ptr<const Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
};

// The oneDNN convolution for a Conv-like node (Conv, com.onyx FusedConv) with
// `post_ops`, or nullptr when this node keeps the reference path: its weights
// are not a constant float initializer, or oneDNN has no primitive for it.
// Compiles for the input shape when shape inference fixed it.
absl::StatusOr<std::unique_ptr<DnnlConvolution>> CreateDnnlConvolutionFor(
    const OpKernelInfo& info, const ConvPostOps& post_ops, ConvLayout layout = ConvLayout::kChannelsFirst);

// Parses an activation as the fusion passes write it on a com.onyx node
// ("Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "Swish", or "" for
// none) with its parameters; INVALID_ARGUMENT naming the value otherwise.
absl::StatusOr<ConvActivation::Kind> ParseConvActivation(absl::string_view name);

}  // namespace onyx
