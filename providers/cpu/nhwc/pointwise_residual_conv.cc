#include "providers/cpu/nhwc/pointwise_residual_conv.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/simd/row_kernels.h"

namespace onyx {
namespace {

// A chunk's output: 512 KiB, half of this machine's L2 cache per core, so
// that its sum with z reads it back from there; up to 1 MiB where a chunk
// needs more pixels than the input has channels, so that each chunk's pass
// over the weights costs less than its output.
constexpr int64_t kChunkFloats = int64_t{1} << 17, kMaxChunkFloats = int64_t{1} << 18;
constexpr int64_t kMinChunkPixels = 128;
// Outputs below 2 MiB stay in cache anyway: the sum post-op runs them.
constexpr int64_t kMinChunkedOutputFloats = int64_t{1} << 19;

bool AllEqual(const std::vector<int64_t>& values, int64_t value) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == value; });
}

}  // namespace

bool ActivationClamp(const ConvActivation& activation, float* lo, float* hi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  *lo = -kInf;
  *hi = kInf;
  switch (activation.kind) {
    case ConvActivation::Kind::kNone: return true;
    case ConvActivation::Kind::kRelu: *lo = 0.f; return true;
    case ConvActivation::Kind::kClip:
      *lo = activation.alpha;
      *hi = activation.beta;
      return true;
    default: return false;
  }
}

absl::StatusOr<std::unique_ptr<PointwiseResidualConv>> PointwiseResidualConv::Create(const OpKernelInfo& info,
                                                                                     const ConvActivation& activation) {
  float lo = 0.f, hi = 0.f;
  if (!ActivationClamp(activation, &lo, &hi)) return nullptr;
  const Tensor* w = info.ConstantInput(1);
  const Tensor* b = info.HasInput(2) ? info.ConstantInput(2) : nullptr;
  if (!info.HasInput(3) || info.InputType(0) != DataType::kFloat) return nullptr;
  if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) return nullptr;
  if (info.HasInput(2) && (b == nullptr || b->type() != DataType::kFloat)) return nullptr;
  const Dims& wd = w->dims();
  if (wd[2] != 1 || wd[3] != 1 || wd[0] < kPointwiseResidualMinChannels) return nullptr;
  if (wd[0] * std::max(wd[1], kMinChunkPixels) > kMaxChunkFloats) return nullptr;
  if (info.AttrOr<int64_t>("group", 1) != 1) return nullptr;
  const ConvAttributes attrs = ConvAttributes::FromInfo(info);
  if (!AllEqual(attrs.strides, 1) || !AllEqual(attrs.pads, 0)) return nullptr;
  if (!attrs.kernel_shape.empty() && !AllEqual(attrs.kernel_shape, 1)) return nullptr;
  // Bias only: the residual and the activation are this kernel's.
  auto chunked = DnnlConvolution::Create(attrs, 1, *w, b, ConvPostOps{}, {}, ConvLayout::kChannelsLast);
  if (!chunked.ok() && absl::IsUnimplemented(chunked.status())) return nullptr;
  if (!chunked.ok()) return info.Error(chunked.status().message());
  ConvPostOps post_ops;
  post_ops.residual = true;
  post_ops.activation = activation;
  // The whole tensor with the sum post-op, for outputs small enough to stay
  // in cache; compiled for the input shape when shape inference fixed it.
  ASSIGN_OR_RETURN(std::unique_ptr<DnnlConvolution> fused,
                   CreateDnnlConvolutionFor(info, post_ops, ConvLayout::kChannelsLast));
  if (fused == nullptr) return nullptr;
  auto kernel = std::unique_ptr<PointwiseResidualConv>(
      new PointwiseResidualConv(*std::move(chunked), std::move(fused), wd[1], wd[0], lo, hi));
  // The chunks' primitives compiled now too, single-threaded as they run.
  if (const ValueInfo* x = info.InputInfo(0); x != nullptr && x->has_shape && x->dims.size() == 4) {
    const int64_t pixels = x->dims[0] * x->dims[1] * x->dims[2];
    if (x->dims[0] > 0 && x->dims[1] > 0 && x->dims[2] > 0 && x->dims[3] == wd[1] && kernel->Chunked(pixels)) {
      const int64_t per = kernel->ChunkPixels(pixels, IntraOpThreads());
      ScopedIntraOpThreads one(1);
      for (int64_t count : {per, pixels % per}) {
        if (count == 0) continue;
        auto compiled = kernel->chunked_->ImplementationFor({1, 1, count, wd[1]});
        if (!compiled.ok()) return info.Error(compiled.status().message());
      }
    }
  }
  return kernel;
}

PointwiseResidualConv::PointwiseResidualConv(std::unique_ptr<DnnlConvolution> chunked,
                                             std::unique_ptr<DnnlConvolution> fused, int64_t in_channels,
                                             int64_t out_channels, float lo, float hi)
    : chunked_(std::move(chunked)),
      fused_(std::move(fused)),
      in_channels_(in_channels),
      out_channels_(out_channels),
      lo_(lo),
      hi_(hi) {}

bool PointwiseResidualConv::Chunked(int64_t pixels) const { return pixels * out_channels_ >= kMinChunkedOutputFloats; }

int64_t PointwiseResidualConv::ChunkPixels(int64_t pixels, int threads) const {
  const int64_t target = std::max({kChunkFloats / out_channels_, kMinChunkPixels, in_channels_});
  int64_t chunks = (pixels + target - 1) / target;
  // A whole number of chunks per thread where there are enough pixels.
  if (threads > 1 && chunks > 1) chunks = (chunks + threads - 1) / threads * threads;
  int64_t per = (pixels + chunks - 1) / chunks;
  per = (per + 15) / 16 * 16;  // whole vectors of pixels
  return std::max<int64_t>(1, std::min(per, pixels));
}

absl::Status PointwiseResidualConv::Run(const Tensor& x, const Tensor& z, Tensor& y) const {
  const Dims& xd = x.dims();
  if (x.rank() != 4 || xd[3] != in_channels_) {
    return absl::InvalidArgumentError(
        absl::StrCat("X ", DimsToString(xd), " must be [N, H, W, ", in_channels_, "] (channels last)"));
  }
  const Dims expected = {xd[0], xd[1], xd[2], out_channels_};
  if (z.dims() != expected || y.dims() != expected || z.type() != DataType::kFloat) {
    return absl::InvalidArgumentError(absl::StrCat("residual Z ", DimsToString(z.dims()), " and Y ",
                                                   DimsToString(y.dims()), " must both be ", DimsToString(expected)));
  }
  const int64_t pixels = xd[0] * xd[1] * xd[2];
  if (pixels == 0) return absl::OkStatus();
  if (!Chunked(pixels)) return fused_->Run(x, &z, y);
  const int64_t per = ChunkPixels(pixels, IntraOpThreads());
  const int64_t chunks = (pixels + per - 1) / per;
  const float* xs = x.data<float>();
  const float* zs = z.data<float>();
  float* ys = y.mutable_data<float>();
  absl::Mutex mu;
  absl::Status failed;
  ParallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
    ScopedIntraOpThreads one(1);  // this thread's chunks, each by a single-threaded primitive
    float* buffer = KernelScratch<float>(kScratchPointwiseChunk, per * out_channels_);
    absl::Status status =
        buffer != nullptr ? absl::OkStatus() : absl::ResourceExhaustedError("no memory for a pointwise chunk");
    for (int64_t c = begin; c < end && status.ok(); ++c) {
      const int64_t first = c * per, count = std::min(per, pixels - first);
      const Tensor in =
          Tensor::Wrap(DataType::kFloat, {1, 1, count, in_channels_}, const_cast<float*>(xs + first * in_channels_));
      Tensor out = Tensor::Wrap(DataType::kFloat, {1, 1, count, out_channels_}, buffer);
      status = chunked_->Run(in, nullptr, out);
      if (status.ok()) {
        const int64_t offset = first * out_channels_;
        simd::AddClamp(buffer, zs + offset, ys + offset, count * out_channels_, lo_, hi_);
      }
    }
    if (!status.ok()) {
      absl::MutexLock lock(&mu);
      if (failed.ok()) failed = status;
    }
  });
  return failed;
}

}  // namespace onyx
