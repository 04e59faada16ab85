// com.microsoft QLinearGlobalAveragePool and QLinearAveragePool, int8 or
// uint8, NCHW or (channels_last) NHWC, computed as ONNX Runtime computes them:
//
//   global: per channel, the integer sum of X minus zp_x * size, times
//     x_scale / (y_scale * size) in float, rounded half to even, plus zp_y,
//     saturated (MLAS's requantization);
//   windowed (1 to 3 spatial dims): each X dequantized to float, summed over
//     the window in row-major order, divided by the count (the window inside
//     the input, or the kernel size with count_include_pad), quantized.
//     A window covering the whole input with no padding takes the global path.
//
// Output sizes follow ONNX Runtime's PoolAttributes (floor or ceil_mode,
// auto_pad SAME_UPPER / SAME_LOWER / VALID).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/contrib/qlinear_util.h"

namespace onyx {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// [N, C, spatial...] geometry of X in either layout: element (n, c, s) at
// n * batch_stride + c * channel_stride + s * spatial_stride (s flattened).
struct Layout {
  int64_t batch = 0, channels = 0, spatial_size = 1;
  Dims spatial;
  int64_t batch_stride = 0, channel_stride = 0, spatial_stride = 0;
};

absl::StatusOr<Layout> LayoutOf(const OpKernelContext& ctx, const Tensor& x, bool channels_last) {
  if (x.rank() < 3) return ctx.Error("X must have rank 3 or more, received " + DimsToString(x.dims()));
  Layout l;
  const Dims& d = x.dims();
  l.batch = d[0];
  l.channels = channels_last ? d.back() : d[1];
  l.spatial.assign(d.begin() + (channels_last ? 1 : 2), d.end() - (channels_last ? 1 : 0));
  for (int64_t s : l.spatial) l.spatial_size *= s;
  l.batch_stride = l.channels * l.spatial_size;
  l.channel_stride = channels_last ? 1 : l.spatial_size;
  l.spatial_stride = channels_last ? l.channels : 1;
  return l;
}

template <typename Q>
absl::Status GlobalAverage(const OpKernelContext& ctx, const Layout& l, const Q* x, const QuantParams& px,
                           const QuantParams& py, Q* y) {
  const int64_t size = l.spatial_size;
  const float scale = px.scale / (py.scale * static_cast<float>(size));
  if (size >= (int64_t{1} << 24) || scale < 0x1.0p-32f || scale >= 256.f) {
    return ctx.Error(absl::StrCat("x_scale / (y_scale * ", size,
                                  ") is outside the range ONNX Runtime computes in ([2^-32, 256), fewer than 2^24 "
                                  "values per channel)"));
  }
  const int32_t bias = -px.zero_point * static_cast<int32_t>(size);
  const float lo = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::lowest()) - py.zero_point);
  const float hi = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::max()) - py.zero_point);
  ParallelFor(l.batch * l.channels, std::max<int64_t>(1, 65536 / std::max<int64_t>(size, 1)),
              [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / l.channels, c = i % l.channels;
      const Q* p = x + n * l.batch_stride + c * l.channel_stride;
      int32_t sum = 0;
      for (int64_t s = 0; s < size; ++s) sum += p[s * l.spatial_stride];
      const float v = std::min(std::max(static_cast<float>(sum + bias) * scale, lo), hi);
      // Output [N, C, 1...] or [N, 1..., C]: channel i of batch n either way.
      y[i] = static_cast<Q>(static_cast<int32_t>(std::nearbyint(v)) + py.zero_point);
    }
  });
  return absl::OkStatus();
}

struct PoolGeometry {
  Dims kernel, strides, pads_begin, pads_end, out;
  bool count_include_pad = false;
};

class QLinearPool final : public OpKernel {
 public:
  QLinearPool(const OpKernelInfo& info, bool global)
      : global_(global),
        channels_last_(info.AttrOr<int64_t>("channels_last", 0) != 0),
        kernel_(info.AttrOr<std::vector<int64_t>>("kernel_shape", {})),
        strides_(info.AttrOr<std::vector<int64_t>>("strides", {})),
        pads_(info.AttrOr<std::vector<int64_t>>("pads", {})),
        auto_pad_(info.AttrOr<std::string>("auto_pad", "NOTSET")),
        ceil_mode_(info.AttrOr<int64_t>("ceil_mode", 0) != 0),
        count_include_pad_(info.AttrOr<int64_t>("count_include_pad", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr || !Is8Bit(x->type())) return ctx.Error("X must be an int8 or uint8 tensor");
    ASSIGN_OR_RETURN(QuantParams px, ReadQuantParams(ctx, 0, 1, 2));
    ASSIGN_OR_RETURN(QuantParams py, ReadQuantParams(ctx, 0, 3, 4));
    ASSIGN_OR_RETURN(Layout l, LayoutOf(ctx, *x, channels_last_));
    Dims out_spatial(l.spatial.size(), 1);
    PoolGeometry g;
    bool whole = global_;
    if (!global_) {
      ASSIGN_OR_RETURN(g, Geometry(ctx, l.spatial));
      out_spatial = g.out;
      whole = g.kernel == l.spatial;
      for (size_t i = 0; i < g.kernel.size(); ++i) whole = whole && g.pads_begin[i] == 0 && g.pads_end[i] == 0;
    }
    Dims out_dims = {l.batch};
    if (!channels_last_) out_dims.push_back(l.channels);
    out_dims.insert(out_dims.end(), out_spatial.begin(), out_spatial.end());
    if (channels_last_) out_dims.push_back(l.channels);
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x->type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    auto run = [&](auto tag) -> absl::Status {
      using Q = decltype(tag);
      const Q* px_data = static_cast<const Q*>(x->raw());
      Q* py_data = static_cast<Q*>(y->mutable_raw());
      if (whole) return GlobalAverage<Q>(ctx, l, px_data, px, py, py_data);
      Windowed<Q>(l, g, px_data, px, py, py_data);
      return absl::OkStatus();
    };
    return x->type() == DataType::kInt8 ? run(int8_t{}) : run(uint8_t{});
  }

 private:
  absl::StatusOr<PoolGeometry> Geometry(const OpKernelContext& ctx, const Dims& spatial) const {
    const size_t rank = spatial.size();
    if (kernel_.size() != rank || rank > 3) {
      return ctx.Error(absl::StrCat("kernel_shape must have one value per spatial dimension (", rank,
                                    ", at most 3), received ", kernel_.size()));
    }
    PoolGeometry g;
    g.kernel = Dims(kernel_.begin(), kernel_.end());
    g.strides = strides_.empty() ? Dims(rank, 1) : Dims(strides_.begin(), strides_.end());
    g.count_include_pad = count_include_pad_;
    if (g.strides.size() != rank || (!pads_.empty() && pads_.size() != 2 * rank)) {
      return ctx.Error("strides and pads must have one (pads: two) value per spatial dimension");
    }
    for (size_t i = 0; i < rank; ++i) {
      if (g.kernel[i] <= 0 || g.strides[i] <= 0) return ctx.Error("kernel_shape and strides must be positive");
      const int64_t in = spatial[i], k = g.kernel[i], s = g.strides[i];
      int64_t head = pads_.empty() ? 0 : pads_[i], tail = pads_.empty() ? 0 : pads_[i + rank];
      int64_t pad_total = head + tail;
      if (auto_pad_ == "VALID") {
        head = tail = pad_total = 0;
      } else if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        pad_total = std::max<int64_t>(0, ((in + s - 1) / s - 1) * s + k - in);
        head = auto_pad_ == "SAME_LOWER" ? (pad_total + 1) / 2 : pad_total / 2;
        tail = pad_total - head;
      } else if (auto_pad_ != "NOTSET") {
        return ctx.Error("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, received " + auto_pad_);
      }
      const float span = static_cast<float>(in + pad_total - k) / static_cast<float>(s) + 1.f;
      int64_t out = static_cast<int64_t>(ceil_mode_ ? std::ceil(span) : span);
      // With ceil_mode, a last window that would start in the end padding is dropped.
      if (ceil_mode_ && out > 0 && (out - 1) * s >= in + head) --out;
      g.pads_begin.push_back(head);
      g.pads_end.push_back(tail);
      g.out.push_back(std::max<int64_t>(out, 0));
    }
    return g;
  }

  template <typename Q>
  static void Windowed(const Layout& l, const PoolGeometry& g, const Q* x, const QuantParams& px, const QuantParams& py,
                       Q* y) {
    // Up to three spatial dimensions, padded with size-1 ones.
    Dims in(3, 1), kernel(3, 1), stride(3, 1), pad(3, 0), out(3, 1);
    const size_t rank = l.spatial.size();
    for (size_t i = 0; i < rank; ++i) {
      in[i] = l.spatial[i];
      kernel[i] = g.kernel[i];
      stride[i] = g.strides[i];
      pad[i] = g.pads_begin[i];
      out[i] = g.out[i];
    }
    const int64_t out_size = out[0] * out[1] * out[2];
    const int64_t kernel_size = kernel[0] * kernel[1] * kernel[2];
    float dequantized[256];
    for (int i = 0; i < 256; ++i) {
      dequantized[i] = px.scale * static_cast<float>(static_cast<int32_t>(static_cast<Q>(i)) - px.zero_point);
    }
    const int64_t out_stride = l.spatial_stride;  // the same layout as X
    ParallelFor(l.batch * l.channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = i / l.channels, c = i % l.channels;
        const Q* xc = x + n * l.batch_stride + c * l.channel_stride;
        Q* yc = y + n * l.channels * out_size + c * (l.channel_stride == 1 ? 1 : out_size);
        for (int64_t o = 0; o < out_size; ++o) {
          const int64_t o0 = o / (out[1] * out[2]), o1 = (o / out[2]) % out[1], o2 = o % out[2];
          int64_t start[3], stop[3];
          const int64_t idx[3] = {o0, o1, o2};
          for (int d = 0; d < 3; ++d) {
            start[d] = idx[d] * stride[d] - pad[d];
            stop[d] = std::min(start[d] + kernel[d], in[d]);
            start[d] = std::max<int64_t>(start[d], 0);
          }
          float sum = 0.f;
          for (int64_t h = start[0]; h < stop[0]; ++h) {
            for (int64_t w = start[1]; w < stop[1]; ++w) {
              for (int64_t d = start[2]; d < stop[2]; ++d) {
                const int64_t s = (h * in[1] + w) * in[2] + d;
                sum += dequantized[static_cast<uint8_t>(xc[s * l.spatial_stride])];
              }
            }
          }
          const int64_t count =
              g.count_include_pad ? kernel_size : (stop[0] - start[0]) * (stop[1] - start[1]) * (stop[2] - start[2]);
          const float avg = sum / static_cast<float>(count);
          const int32_t q = static_cast<int32_t>(std::nearbyint(avg / py.scale + static_cast<float>(py.zero_point)));
          const int32_t lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
          yc[o * out_stride] = static_cast<Q>(std::min(std::max(q, lo), hi));
        }
      }
    });
  }

  bool global_;
  bool channels_last_;
  std::vector<int64_t> kernel_, strides_, pads_;
  std::string auto_pad_;
  bool ceil_mode_, count_include_pad_;
};

KernelFactory Pool(bool global) {
  return [global](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new QLinearPool(info, global));
  };
}

KernelDef Int8Def(const char* op) {
  return KernelDefBuilder(op).Domain(kMicrosoftDomain).Since(1).Types("T", {DataType::kInt8, DataType::kUint8}).Build();
}

}  // namespace

void RegisterQLinearPoolKernels(KernelRegistry& r) {
  r.Register(Int8Def("QLinearGlobalAveragePool"), Pool(true));
  r.Register(Int8Def("QLinearAveragePool"), Pool(false));
}

}  // namespace onyx
