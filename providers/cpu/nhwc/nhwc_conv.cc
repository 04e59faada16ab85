// com.onyx NhwcConv(X, W, B?, Z?): FusedConv on channels-last activations.
// X, Z and Y are [N, H, W, C]; W stays [M, C/group, kH, kW] and B [M]. The
// oneDNN primitive runs NHWC natively, so a chain of these converts nothing
// between convolutions.
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
#include "providers/cpu/simd/stem_conv.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

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
  std::unique_ptr<DnnlConvolution> conv_;
  std::unique_ptr<PointwiseResidualConv> pointwise_;  // instead of conv_, for wide 1x1 residual convolutions
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
