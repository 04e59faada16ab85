// PointwiseResidualConv: y = act(conv1x1(x) + b + z) on channels-last
// tensors, for convolutions with a wide output (ResNet's bottleneck
// expansions, 64 -> 256 channels at 56x56 and 128 -> 512 at 28x28).
//
//   ASSIGN_OR_RETURN(auto conv, PointwiseResidualConv::Create(info, activation));
//   if (conv != nullptr) RETURN_IF_ERROR(conv->Run(x, z, y));   // else: another path
//
// oneDNN's sum post-op reads z back from memory while the primitive streams
// y out, costing up to 40% over the plain convolution at those sizes
// (bench/RESULTS.md). Here, for outputs too large to stay in cache (2 MiB
// and up), each thread convolves a chunk of pixels (a 1x1
// stride-1 convolution treats every pixel alike, so any run of pixels is an
// image of one row) into a buffer that stays in its L2 cache, then adds z
// and applies Relu / Clip in one pass over the chunk. Chunks are sized to
// split evenly among the intra-op threads, each running a single-threaded
// primitive. Thread-safe.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "framework/op_kernel.h"
#include "providers/cpu/nn/dnnl_conv.h"

namespace onyx {

// The bounds [lo, hi] an activation clamps to (none: (-inf, inf), Relu:
// [0, inf), Clip: [min, max]); false for any other activation.
bool ActivationClamp(const ConvActivation& activation, float* lo, float* hi);

// Output channels below this run through the sum post-op, which costs
// about what the plain convolution does there.
inline constexpr int64_t kPointwiseResidualMinChannels = 128;

class PointwiseResidualConv {
 public:
  // The kernel for an NhwcConv node with a residual input, or nullptr when
  // the node is not a 1x1 stride-1 unpadded ungrouped convolution of at
  // least kPointwiseResidualMinChannels outputs with no activation, Relu or
  // Clip, its weights are too large for chunks (M x max(C, 128) over 2^18),
  // or oneDNN has no primitive for it.
  static absl::StatusOr<std::unique_ptr<PointwiseResidualConv>> Create(const OpKernelInfo& info,
                                                                       const ConvActivation& activation);

  // x [N, H, W, C]; z and y [N, H, W, M] (y may be z's buffer).
  absl::Status Run(const Tensor& x, const Tensor& z, Tensor& y) const;

 private:
  PointwiseResidualConv(std::unique_ptr<DnnlConvolution> chunked, std::unique_ptr<DnnlConvolution> fused,
                        int64_t in_channels, int64_t out_channels, float lo, float hi);
  // Whether `pixels` pixels run in chunks (their output would not stay in
  // cache) rather than through the sum post-op.
  bool Chunked(int64_t pixels) const;
  // Pixels per chunk for `pixels` pixels at `threads` threads.
  int64_t ChunkPixels(int64_t pixels, int threads) const;

  std::unique_ptr<DnnlConvolution> chunked_;  // bias only, on [1, 1, pixels, C]
  std::unique_ptr<DnnlConvolution> fused_;    // bias, residual and activation post-ops, on [N, H, W, C]
  int64_t in_channels_, out_channels_;
  float lo_, hi_;  // the activation's clamp
};

}  // namespace onyx
