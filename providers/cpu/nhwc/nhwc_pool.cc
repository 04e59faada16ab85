// Channels-last pooling, [N, H, W, C] in and out:
// - com.onyx NhwcMaxPool / NhwcAveragePool: MaxPool / AveragePool's
//   attributes (2 spatial dims, no Indices output, dilations 1), run by
//   oneDNN's pooling primitive, or by a plain loop when oneDNN has none for
//   the geometry (pads as wide as the window). AveragePool with ceil_mode and
//   count_include_pad is refused: ONNX counts only the declared pads there,
//   which neither path models; the layout pass leaves such nodes alone.
// - com.onyx NhwcGlobalAveragePool / NhwcGlobalMaxPool: [N, 1, 1, C].
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/nhwc/nhwc_kernels.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/dnnl_support.h"
#include "providers/cpu/simd/row_kernels.h"

namespace onyx {
namespace {

using dnnl::memory;

// Which pads oneDNN needs at the end of each axis for the output size ONNX
// asked for: with ceil_mode the last window may start inside the input and
// run past the declared pad.
int64_t EffectivePadEnd(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t out) {
  if ((in - kernel + pad_begin + pad_end) / stride + 1 == out) return pad_end;
  return (out - 1) * stride + kernel - in - pad_begin;
}

template <bool kMax>
class NhwcPool final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ConvAttributes attrs = ConvAttributes::FromInfo(info);
    if (attrs.kernel_shape.size() != 2) {
      return info.Error(absl::StrCat("kernel_shape must have 2 values, received ", attrs.kernel_shape.size()));
    }
    for (int64_t d : attrs.dilations) {
      if (d != 1) return info.Error(absl::StrCat("dilations must be 1, received ", d));
    }
    const bool include_pad = info.AttrOr<int64_t>("count_include_pad", 0) != 0;
    if (!kMax && include_pad && attrs.ceil_mode) {
      return info.Error("ceil_mode with count_include_pad is not run channels-last");
    }
    return std::unique_ptr<OpKernel>(new NhwcPool(std::move(attrs), include_pad));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, kMax ? "NhwcMaxPool" : "NhwcAveragePool"));
    const Tensor& x = *ctx.Input(0);
    if (x.rank() != 4) return ctx.Error("X must be [N, H, W, C], received " + DimsToString(x.dims()));
    const Dims& d = x.dims();
    auto geometry = ResolveGeometry(attrs_, {d[1], d[2]}, attrs_.kernel_shape);
    if (!geometry.ok()) return ctx.Error(geometry.status().message());
    const SpatialGeometry& g = *geometry;
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, {d[0], g.out[0], g.out[1], d[3]}, DataType::kFloat));
    std::shared_ptr<const Compiled> compiled = CompiledFor(d, g);
    if (compiled != nullptr) {
      absl::Status status = DnnlGuarded("pooling run", [&]() -> absl::Status {
        ApplyThreadSettings();
        dnnl::stream& stream = DnnlThreadStream();
        memory src(compiled->src, DnnlCpuEngine(), const_cast<void*>(x.raw()));
        memory dst(compiled->dst, DnnlCpuEngine(), y->mutable_raw());
        compiled->pool.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
        stream.wait();
        return absl::OkStatus();
      });
      return status.ok() ? status : ctx.Error(status.message());
    }
    RunPlain(x, g, *y);
    return absl::OkStatus();
  }

 private:
  struct Compiled {
    dnnl::pooling_forward pool;
    memory::desc src, dst;
  };

  NhwcPool(ConvAttributes attrs, bool include_pad) : attrs_(std::move(attrs)), include_pad_(include_pad) {}

  // The primitive for this input shape and thread count, compiled once;
  // nullptr when oneDNN refuses the geometry (it rejects pads as wide as the
  // window, which ONNX allows), for the plain loop to run.
  std::shared_ptr<const Compiled> CompiledFor(const Dims& d, const SpatialGeometry& g) const {
    ApplyThreadSettings();
    std::pair<Dims, int> key(d, IntraOpThreads());
    {
      absl::MutexLock lock(&mu_);
      auto it = compiled_.find(key);
      if (it != compiled_.end()) return it->second;
    }
    auto compiled = std::make_shared<Compiled>();
    absl::Status status = DnnlGuarded("pooling for this shape", [&]() -> absl::Status {
      const auto f32 = memory::data_type::f32;
      compiled->src = memory::desc({d[0], d[3], d[1], d[2]}, f32, memory::format_tag::nhwc);
      compiled->dst = memory::desc({d[0], d[3], g.out[0], g.out[1]}, f32, memory::format_tag::nhwc);
      memory::dims pad_end;
      for (int i = 0; i < 2; ++i) {
        pad_end.push_back(EffectivePadEnd(g.in[i], g.kernel[i], g.strides[i], g.pad_begin[i], g.pad_end[i], g.out[i]));
      }
      const auto algorithm = kMax           ? dnnl::algorithm::pooling_max
                             : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                            : dnnl::algorithm::pooling_avg_exclude_padding;
      dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, compiled->src, compiled->dst,
                                       {g.strides[0], g.strides[1]}, {g.kernel[0], g.kernel[1]},
                                       {g.pad_begin[0], g.pad_begin[1]}, pad_end);
      compiled->pool = dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(desc, DnnlCpuEngine()));
      return absl::OkStatus();
    });
    if (!status.ok()) compiled.reset();
    absl::MutexLock lock(&mu_);
    return compiled_.emplace(std::move(key), std::move(compiled)).first->second;
  }

  // The reference loop: every output pixel scans its window, channels innermost.
  void RunPlain(const Tensor& x, const SpatialGeometry& g, Tensor& y) const {
    const Dims& d = x.dims();
    const int64_t n_n = d[0], h = d[1], w = d[2], c_n = d[3], oh_n = g.out[0], ow_n = g.out[1];
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    ParallelFor(n_n * oh_n, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> acc(c_n);
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / oh_n, oh = row % oh_n;
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          std::fill(acc.begin(), acc.end(), kMax ? -std::numeric_limits<float>::infinity() : 0.f);
          int64_t inside = 0, padded = 0;
          for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
            const int64_t ih = oh * g.strides[0] - g.pad_begin[0] + kh;
            for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
              const int64_t iw = ow * g.strides[1] - g.pad_begin[1] + kw;
              if (ih >= -g.pad_begin[0] && ih < h + g.pad_end[0] && iw >= -g.pad_begin[1] && iw < w + g.pad_end[1]) {
                ++padded;
              }
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              ++inside;
              const float* src = px + ((n * h + ih) * w + iw) * c_n;
              for (int64_t c = 0; c < c_n; ++c) acc[c] = kMax ? std::max(acc[c], src[c]) : acc[c] + src[c];
            }
          }
          float* dst = py + ((n * oh_n + oh) * ow_n + ow) * c_n;
          const float scale =
              kMax ? 1.f : 1.f / static_cast<float>(std::max<int64_t>(1, include_pad_ ? padded : inside));
          for (int64_t c = 0; c < c_n; ++c) dst[c] = kMax ? acc[c] : acc[c] * scale;
        }
      }
    });
  }

  ConvAttributes attrs_;
  bool include_pad_;
  mutable absl::Mutex mu_;
  // By (input dims, intra-op threads), as for the convolution.
  mutable std::map<std::pair<Dims, int>, std::shared_ptr<const Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
};

// [N, H, W, C] -> [N, 1, 1, C]: each thread takes a slice of channels and
// walks the rows, so the inner loop runs over contiguous channels. Averages
// sum blocks of rows in float and the blocks in double.
template <bool kMax>
class NhwcGlobalPool final : public OpKernel {
 public:
  explicit NhwcGlobalPool(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, kMax ? "NhwcGlobalMaxPool" : "NhwcGlobalAveragePool"));
    const Tensor& x = *ctx.Input(0);
    if (x.rank() != 4) return ctx.Error("X must be [N, H, W, C], received " + DimsToString(x.dims()));
    const Dims& d = x.dims();
    const int64_t n_n = d[0], rows = d[1] * d[2], c_n = d[3];
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, {n_n, 1, 1, c_n}, DataType::kFloat));
    const float* px = x.data<float>();
    float* py = y->mutable_data<float>();
    constexpr int64_t kSlice = 64, kRowBlock = 64;
    const int64_t slices = (c_n + kSlice - 1) / kSlice;
    ParallelFor(n_n * slices, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, rows * kSlice)),
                [&](int64_t begin, int64_t end) {
      float block[kSlice];
      double total[kSlice];
      for (int64_t item = begin; item < end; ++item) {
        const int64_t n = item / slices, c0 = (item % slices) * kSlice, width = std::min(kSlice, c_n - c0);
        const float* src = px + n * rows * c_n + c0;
        for (int64_t c = 0; c < width; ++c) total[c] = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
          const int64_t r1 = std::min(rows, r0 + kRowBlock);
          std::copy(src + r0 * c_n, src + r0 * c_n + width, block);
          simd::AccumulateRows(src + (r0 + 1) * c_n, r1 - r0 - 1, width, c_n, kMax, block);
          for (int64_t c = 0; c < width; ++c) {
            total[c] = kMax ? std::max<double>(total[c], block[c]) : total[c] + block[c];
          }
        }
        float* dst = py + n * c_n + c0;
        for (int64_t c = 0; c < width; ++c) {
          dst[c] = static_cast<float>(kMax ? total[c] : total[c] / static_cast<double>(rows));
        }
      }
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterNhwcPoolKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("NhwcMaxPool").Domain(kOnyxDomain).Build(), MakeFactory<NhwcPool<true>>());
  r.Register(KernelDefBuilder("NhwcAveragePool").Domain(kOnyxDomain).Build(), MakeFactory<NhwcPool<false>>());
  r.Register(KernelDefBuilder("NhwcGlobalMaxPool").Domain(kOnyxDomain).Build(), MakeFactory<NhwcGlobalPool<true>>());
  r.Register(KernelDefBuilder("NhwcGlobalAveragePool").Domain(kOnyxDomain).Build(),
             MakeFactory<NhwcGlobalPool<false>>());
}

}  // namespace onyx
