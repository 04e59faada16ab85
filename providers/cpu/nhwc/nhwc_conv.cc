// com.onyx NhwcConv(X, W, B?, Z?): FusedConv on channels-last activations.
// X, Z and Y are [N, H, W, C]; W stays [M, C/group, kH, kW] and B [M]. The
// oneDNN primitive runs NHWC natively, so a chain of these converts nothing
// between convolutions; 1x1 convolutions into at most 32 channels run
// simd::PointwiseConvRows instead, and wide 1x1 ones adding a residual
// PointwiseResidualConv's chunks.
// com.onyx NchwToNhwcConv(X, W, B?): an image network's first convolution,
// X [N, C, H, W] as the client sent it (C <= 4), Y [N, OH, OW, M] for the
// channels-last layers after it; run by simd::StemConvRows, so the image is
// never transposed. With pool_* attributes (a MaxPool's, folded in by the
// layout pass) Y is the max pool of that: each thread pools the stem rows
// it has just computed, so the stem's output (ResNet's largest tensor)
// never goes to memory.
#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/nhwc/nhwc_kernels.h"
#include "providers/cpu/nhwc/pointwise_residual_conv.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/dnnl_conv.h"
#include "providers/cpu/simd/pointwise_conv.h"
#include "providers/cpu/simd/stem_conv.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

// A 1x1 stride-1 unpadded ungrouped convolution into at most
// simd::kPointwiseMaxChannels channels, with no activation, Relu, Clip,
// Sigmoid or SiLU (squeeze-excite's): simd::PointwiseConvRows over the
// pixels, the residual added and the clamp applied in registers, Sigmoid
// and SiLU by onyx's vector math over each thread's rows right after.
class NarrowPointwise {
 public:
  static std::unique_ptr<NarrowPointwise> Create(const OpKernelInfo& info, const ConvActivation& activation) {
    float lo = 0.f, hi = 0.f;
    void (*after)(const float*, float*, int64_t) = nullptr;
    if (!ActivationClamp(activation, &lo, &hi)) {
      // Sigmoid and SiLU (Swish with beta 1) over the rows after the kernel.
      if (activation.kind == ConvActivation::Kind::kSigmoid) {
        after = simd::Sigmoid;
      } else if (activation.kind == ConvActivation::Kind::kSwish && activation.alpha == 1.f) {
        after = simd::Silu;
      } else {
        return nullptr;
      }
    }
    const Tensor* w = info.ConstantInput(1);
    const Tensor* b = info.HasInput(2) ? info.ConstantInput(2) : nullptr;
    if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) return nullptr;
    if (info.HasInput(2) && (b == nullptr || b->type() != DataType::kFloat || b->num_elements() != w->dims()[0])) {
      return nullptr;
    }
    const Dims& wd = w->dims();
    if (wd[0] > simd::kPointwiseMaxChannels || wd[2] != 1 || wd[3] != 1) return nullptr;
    if (info.AttrOr<int64_t>("group", 1) != 1) return nullptr;
    const ConvAttributes attrs = ConvAttributes::FromInfo(info);
    auto ones = [](const std::vector<int64_t>& v, int64_t value) {
      return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == value; });
    };
    if (!ones(attrs.strides, 1) || !ones(attrs.pads, 0) || !ones(attrs.kernel_shape, 1)) return nullptr;
    auto kernel = std::make_unique<NarrowPointwise>();
    kernel->packed_ =
        simd::PackPointwiseWeights(w->data<float>(), wd[0], wd[1], b != nullptr ? b->data<float>() : nullptr);
    kernel->in_channels_ = wd[1];
    kernel->out_channels_ = wd[0];
    kernel->lo_ = lo;
    kernel->hi_ = hi;
    kernel->after_ = after;
    return kernel;
  }

  absl::Status Run(OpKernelContext& ctx, const Tensor& x) const {
    const Dims& xd = x.dims();
    if (x.rank() != 4 || xd[3] != in_channels_) {
      return ctx.Error(absl::StrCat("X ", DimsToString(xd), " must be [N, H, W, ", in_channels_, "]"));
    }
    const Dims out = {xd[0], xd[1], xd[2], out_channels_};
    const Tensor* z = ctx.Input(3);
    if (z != nullptr && (z->dims() != out || z->type() != DataType::kFloat)) {
      return ctx.Error(absl::StrCat("residual Z ", DimsToString(z->dims()), " must be ", DimsToString(out)));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out, DataType::kFloat));
    simd::PointwiseConvParams p;
    p.x = x.data<float>();
    p.z = z != nullptr ? z->data<float>() : nullptr;
    p.y = y->mutable_data<float>();
    p.in_channels = in_channels_;
    p.out_channels = out_channels_;
    p.packed = packed_.data();
    p.lo = lo_;
    p.hi = hi_;
    // About 64K multiply-adds per block at least: a squeeze-excite's single
    // pixel runs inline.
    const int64_t grain =
        std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(1, in_channels_ * out_channels_));
    ParallelFor(xd[0] * xd[1] * xd[2], grain, [&](int64_t begin, int64_t end) {
      simd::PointwiseConvRows(p, begin, end);
      if (after_ != nullptr) {
        float* rows = p.y + begin * out_channels_;
        after_(rows, rows, (end - begin) * out_channels_);
      }
    });
    return absl::OkStatus();
  }

 private:
  std::vector<float> packed_;
  int64_t in_channels_ = 0, out_channels_ = 0;
  float lo_ = 0.f, hi_ = 0.f;
  void (*after_)(const float*, float*, int64_t) = nullptr;  // Sigmoid or SiLU, over the stored rows
};

class NhwcConv final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ConvPostOps post_ops;
    ASSIGN_OR_RETURN(post_ops.activation, ParseFusedActivation(info));
    post_ops.residual = info.HasInput(3);
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) {
      return info.Error("W must be a constant float [M, C/group, kH, kW] initializer");
    }
    if (info.HasInput(2) && info.ConstantInput(2) == nullptr) return info.Error("B must be a constant initializer");
    if (auto narrow = NarrowPointwise::Create(info, post_ops.activation)) {
      return std::unique_ptr<OpKernel>(new NhwcConv(std::move(narrow)));
    }
    if (post_ops.residual) {
      ASSIGN_OR_RETURN(std::unique_ptr<PointwiseResidualConv> pointwise,
                       PointwiseResidualConv::Create(info, post_ops.activation));
      if (pointwise != nullptr) return std::unique_ptr<OpKernel>(new NhwcConv(std::move(pointwise)));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<DnnlConvolution> conv,
                     CreateDnnlConvolutionFor(info, post_ops, ConvLayout::kChannelsLast));
    if (conv == nullptr) return info.Error("oneDNN has no channels-last convolution for this node");
    return std::unique_ptr<OpKernel>(new NhwcConv(std::move(conv)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, "NhwcConv"));
    const Tensor& x = *ctx.Input(0);
    if (narrow_ != nullptr) return narrow_->Run(ctx, x);
    if (pointwise_ != nullptr) {
      const Tensor* z = ctx.Input(3);
      if (z == nullptr) return ctx.Error("the residual input Z is missing");
      ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, z->dims(), DataType::kFloat));
      absl::Status status = pointwise_->Run(x, *z, *y);
      return status.ok() ? status : ctx.Error(status.message());
    }
    auto out_dims = conv_->OutputDims(x.dims());
    if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *out_dims, DataType::kFloat));
    absl::Status status = conv_->Run(x, ctx.Input(3), *y);
    return status.ok() ? status : ctx.Error(status.message());
  }

 private:
  explicit NhwcConv(std::unique_ptr<DnnlConvolution> conv) : conv_(std::move(conv)) {}
  explicit NhwcConv(std::unique_ptr<PointwiseResidualConv> pointwise) : pointwise_(std::move(pointwise)) {}
  explicit NhwcConv(std::unique_ptr<NarrowPointwise> narrow) : narrow_(std::move(narrow)) {}
  // One of: oneDNN's primitive; wide 1x1 convolutions adding a residual;
  // 1x1 convolutions into few channels.
  std::unique_ptr<DnnlConvolution> conv_;
  std::unique_ptr<PointwiseResidualConv> pointwise_;
  std::unique_ptr<NarrowPointwise> narrow_;
};

class NchwToNhwcConv final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(ConvActivation activation, ParseFusedActivation(info));
    if (info.HasInput(3)) return info.Error("NchwToNhwcConv takes no residual input");
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) {
      return info.Error("W must be a constant float [M, C, kH, kW] initializer");
    }
    const int64_t group = info.AttrOr<int64_t>("group", 1);
    if (group != 1) return info.Error(absl::StrCat("group must be 1, received ", group));
    const Dims& wd = w->dims();
    const int64_t taps = wd[1] * wd[2] * wd[3];
    if (wd[1] > simd::kStemMaxChannels || taps > simd::kStemMaxTaps) {
      return info.Error(absl::StrCat("W ", DimsToString(wd), " must have at most ", simd::kStemMaxChannels,
                                     " input channels and ", simd::kStemMaxTaps, " taps per output"));
    }
    ConvAttributes attrs = ConvAttributes::FromInfo(info);
    for (int64_t d : attrs.dilations) {
      if (d != 1) return info.Error(absl::StrCat("dilations must be 1, received ", d));
    }
    const Tensor* b = info.HasInput(2) ? info.ConstantInput(2) : nullptr;
    if (info.HasInput(2) && (b == nullptr || b->type() != DataType::kFloat || b->num_elements() != wd[0])) {
      return info.Error(absl::StrCat("B must be a constant float initializer of ", wd[0], " values"));
    }
    auto kernel = std::unique_ptr<NchwToNhwcConv>(new NchwToNhwcConv(std::move(attrs), wd, activation));
    if (info.HasAttr("pool_kernel_shape")) {
      ConvAttributes pool;
      pool.kernel_shape = info.AttrOr<std::vector<int64_t>>("pool_kernel_shape", {});
      pool.strides = info.AttrOr<std::vector<int64_t>>("pool_strides", {});
      pool.pads = info.AttrOr<std::vector<int64_t>>("pool_pads", {});
      pool.auto_pad = info.AttrOr<std::string>("pool_auto_pad", "NOTSET");
      pool.ceil_mode = info.AttrOr<int64_t>("pool_ceil_mode", 0) != 0;
      if (pool.kernel_shape.size() != 2) {
        return info.Error(absl::StrCat("pool_kernel_shape must have 2 values, received ", pool.kernel_shape.size()));
      }
      kernel->pool_ = std::move(pool);
    }
    kernel->packed_ = simd::PackStemWeights(w->data<float>(), wd[0], taps);
    kernel->bias_ = simd::PackStemBias(b != nullptr ? b->data<float>() : nullptr, wd[0]);
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, "NchwToNhwcConv"));
    const Tensor& x = *ctx.Input(0);
    auto shape = ResolveConvShape(attrs_, 1, x.dims(), w_dims_);
    if (!shape.ok()) return ctx.Error(shape.status().message());
    const SpatialGeometry& g = shape->geometry;
    const Dims& xd = x.dims();
    const int64_t m = w_dims_[0], oh = g.out[0], ow = g.out[1];
    simd::StemConvParams p;
    p.x = x.data<float>();
    p.channels = xd[1];
    p.height = xd[2];
    p.width = xd[3];
    p.kernel_h = g.kernel[0];
    p.kernel_w = g.kernel[1];
    p.stride_h = g.strides[0];
    p.stride_w = g.strides[1];
    p.pad_top = g.pad_begin[0];
    p.pad_left = g.pad_begin[1];
    p.out_h = oh;
    p.out_w = ow;
    p.out_channels = m;
    p.packed = packed_.data();
    p.bias = bias_.data();
    p.activation = in_register_;
    p.alpha = alpha_;
    p.beta = beta_;
    const int64_t row_floats = ow * m;
    if (!pool_) {
      ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, {xd[0], oh, ow, m}, DataType::kFloat));
      float* out = y->mutable_data<float>();
      ParallelFor(xd[0] * oh, 1, [&](int64_t begin, int64_t end) {
        simd::StemConvRows(p, begin, end, out + begin * row_floats);
        // The activations onyx's vector math computes, over rows still in cache.
        ActivateAfter(out + begin * row_floats, (end - begin) * row_floats);
      });
      return absl::OkStatus();
    }
    auto pooled = ResolvePoolGeometry(*pool_, {oh, ow});
    if (!pooled.ok()) return ctx.Error(absl::StrCat("pool: ", pooled.status().message()));
    const SpatialGeometry& pg = *pooled;
    const int64_t ph = pg.out[0], pw = pg.out[1], window = pg.kernel[0];
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, {xd[0], ph, pw, m}, DataType::kFloat));
    float* out = y->mutable_data<float>();
    std::atomic<bool> no_memory{false};
    ParallelFor(xd[0] * ph, 1, [&](int64_t begin, int64_t end) {
      // The stem rows of the current window, row r of image n in slot
      // r mod window: a window's rows are distinct there, and consecutive
      // windows share the rows they overlap in.
      float* ring = KernelScratch<float>(kScratchStemRows, window * row_floats);
      if (ring == nullptr) {
        no_memory = true;
        return;
      }
      std::vector<int64_t> held(window, -1);
      std::vector<const float*> rows(window);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = i / ph, top = (i % ph) * pg.strides[0] - pg.pad_begin[0];
        int64_t count = 0;
        for (int64_t r = std::max<int64_t>(0, top); r < std::min(oh, top + window); ++r) {
          float* slot = ring + (r % window) * row_floats;
          if (held[r % window] != n * oh + r) {
            simd::StemConvRows(p, n * oh + r, n * oh + r + 1, slot);
            ActivateAfter(slot, row_floats);
            held[r % window] = n * oh + r;
          }
          rows[count++] = slot;
        }
        simd::MaxPoolRow(rows.data(), count, ow, m, pg.kernel[1], pg.strides[1], pg.pad_begin[1], pw, out + i * pw * m);
      }
    });
    if (no_memory) return ctx.Error("no memory for the stem convolution's rows under its pool");
    return absl::OkStatus();
  }

 private:
  using Kind = ConvActivation::Kind;
  using InRegister = simd::StemConvParams::Activation;

  NchwToNhwcConv(ConvAttributes attrs, Dims w_dims, const ConvActivation& a)
      : attrs_(std::move(attrs)), w_dims_(std::move(w_dims)), after_(a) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    switch (a.kind) {
      case Kind::kRelu: Set(InRegister::kClamp, 0.f, kInf); break;
      case Kind::kClip: Set(InRegister::kClamp, a.alpha, a.beta); break;
      case Kind::kLeakyRelu: Set(InRegister::kLeakyRelu, a.alpha, 0.f); break;
      case Kind::kHardSigmoid: Set(InRegister::kHardSigmoid, a.alpha, a.beta); break;
      case Kind::kHardSwish: Set(InRegister::kHardSwish, 0.f, 0.f); break;
      case Kind::kNone:
      case Kind::kSigmoid:
      case Kind::kSwish:
      case Kind::kTanh: return;  // after the rows
    }
    after_.kind = Kind::kNone;
  }

  void Set(InRegister kind, float alpha, float beta) {
    in_register_ = kind;
    alpha_ = alpha;
    beta_ = beta;
  }

  void ActivateAfter(float* y, int64_t n) const {
    switch (after_.kind) {
      case Kind::kSigmoid: simd::Sigmoid(y, y, n); break;
      case Kind::kTanh: simd::Tanh(y, y, n); break;
      case Kind::kSwish:
        if (after_.alpha == 1.f) {
          simd::Silu(y, y, n);
        } else {  // x sigmoid(beta x)
          constexpr int64_t kChunk = 1024;
          float gate[kChunk];
          for (int64_t i = 0; i < n; i += kChunk) {
            const int64_t len = std::min(kChunk, n - i);
            for (int64_t j = 0; j < len; ++j) gate[j] = after_.alpha * y[i + j];
            simd::Sigmoid(gate, gate, len);
            for (int64_t j = 0; j < len; ++j) y[i + j] *= gate[j];
          }
        }
        break;
      default: break;
    }
  }

  ConvAttributes attrs_;
  Dims w_dims_;
  ConvActivation after_;
  InRegister in_register_ = InRegister::kNone;
  float alpha_ = 0.f, beta_ = 0.f;
  std::vector<float> packed_, bias_;
  std::optional<ConvAttributes> pool_;  // the MaxPool folded in, if any
};

}  // namespace

void RegisterNhwcConvKernels(KernelRegistry& r) {
  // Y may take over the residual Z's buffer: the primitive adds Z through
  // its sum post-op, reading each element of Y before writing it, so a Z that
  // dies here costs no copy into Y.
  r.Register(KernelDefBuilder("NhwcConv").Domain(kOnyxDomain).MayInplace(3, 0).Build(), MakeFactory<NhwcConv>());
  r.Register(KernelDefBuilder("NchwToNhwcConv").Domain(kOnyxDomain).Build(), MakeFactory<NchwToNhwcConv>());
}

}  // namespace onyx
