// Pooling: MaxPool (with optional Indices), AveragePool (count_include_pad),
// LpPool, GlobalAveragePool, GlobalMaxPool and GlobalLpPool, over any number of
// spatial dims.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/nn_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

template <PoolKind kind>
class Pool final : public OpKernel {
 public:
  explicit Pool(const OpKernelInfo& info)
      : attrs_(ConvAttributes::FromInfo(info)),
        count_include_pad_(info.AttrOr<int64_t>("count_include_pad", 0) != 0),
        storage_order_(info.AttrOr<int64_t>("storage_order", 0)),
        p_(static_cast<double>(info.AttrOr<int64_t>("p", 2))) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    const Tensor& x = *x_in;
    if (x.rank() < 3) return ctx.Error("input must have rank >= 3, received " + DimsToString(x.dims()));
    std::vector<int64_t> spatial(x.dims().begin() + 2, x.dims().end());
    if (attrs_.kernel_shape.size() != spatial.size()) {
      return ctx.Error(absl::StrCat("attribute 'kernel_shape' has ", attrs_.kernel_shape.size(), " values, input has ",
                                    spatial.size(), " spatial dims"));
    }
    auto geometry = ResolvePoolGeometry(attrs_, spatial);
    if (!geometry.ok()) return ctx.Error(geometry.status().message());
    const SpatialGeometry& g = *geometry;
    Dims out_dims = {x.dims()[0], x.dims()[1]};
    for (int64_t o : g.out) out_dims.push_back(o);
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    Tensor* indices = nullptr;
    if (kind == PoolKind::kMax && ctx.OutputRequested(1)) {
      ASSIGN_OR_RETURN(indices, ctx.Output(1, out_dims, DataType::kInt64));
    }
    if (kind != PoolKind::kLp && x.type() == DataType::kFloat && g.in.size() == 2 && indices == nullptr) {
      Run2D(x, g, *y);
      return absl::OkStatus();
    }
    return DispatchTypes<float, double, int8_t, uint8_t, Half, BFloat16>(x.type(), [&](auto tag) {
      using T = decltype(tag);
      Run<T>(x, g, *y, indices);
      return absl::OkStatus();
    });
  }

 private:
  template <typename T>
  static double Load(const T* p, int64_t i) {
    if constexpr (std::is_same_v<T, Half>) return HalfToFloat(p[i].bits);
    else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16ToFloat(p[i].bits);
    else return static_cast<double>(p[i]);
  }
  template <typename T>
  static void Store(T* p, int64_t i, double v) {
    if constexpr (std::is_same_v<T, Half>) p[i].bits = FloatToHalf(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, BFloat16>) p[i].bits = FloatToBFloat16(static_cast<float>(v));
    else p[i] = static_cast<T>(v);
  }

  // The common case, 2-D float max or average pooling without indices, with
  // the same results as Run (first in-window value kept on ties and NaN,
  // averages summed in double) but without its per-tap index arithmetic:
  // ResNet-50's one 3x3 MaxPool took a fifth of the model's time through Run.
  void Run2D(const Tensor& x, const SpatialGeometry& g, Tensor& y) const {
    const int64_t planes = x.dims()[0] * x.dims()[1];
    const int64_t h = g.in[0], w = g.in[1], oh_n = g.out[0], ow_n = g.out[1];
    const int64_t kh_n = g.kernel[0], kw_n = g.kernel[1];
    const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
    const int64_t ph = g.pad_begin[0], pw = g.pad_begin[1];
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    // The taps of one output coordinate along one axis: [first, last) holds
    // every tap inside the input (they are contiguous), `inside` counts them
    // and `padded` counts those inside the padded extent (count_include_pad).
    struct Taps {
      int64_t first, last, inside, padded;
    };
    auto taps =
        [](int64_t o, int64_t stride, int64_t pad, int64_t dilation, int64_t kernel, int64_t in, int64_t pad_end) {
      Taps t{kernel, 0, 0, 0};
      for (int64_t k = 0; k < kernel; ++k) {
        const int64_t pos = o * stride - pad + k * dilation;
        if (pos >= -pad && pos < in + pad_end) ++t.padded;
        if (pos < 0 || pos >= in) continue;
        t.first = std::min(t.first, k);
        t.last = k + 1;
        ++t.inside;
      }
      return t;
    };
    // Output columns [ow_lo, ow_hi) have every tap of their window inside the row.
    const int64_t ow_lo = std::min(ow_n, (pw + sw - 1) / sw);
    const int64_t ow_hi = std::max(
        ow_lo, std::min(ow_n, (w - 1 - (kw_n - 1) * dw + pw) >= 0 ? (w - 1 - (kw_n - 1) * dw + pw) / sw + 1 : 0));
    ParallelFor(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, oh_n * ow_n * kh_n * kw_n)),
                [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const float* src = px + plane * h * w;
        float* dst = py + plane * oh_n * ow_n;
        for (int64_t oh = 0; oh < oh_n; ++oh) {
          const Taps rows = taps(oh, sh, ph, dh, kh_n, h, g.pad_end[0]);
          float* out_row = dst + oh * ow_n;
          if (kind == PoolKind::kMax && rows.inside > 0 && ow_lo < ow_hi) {
            // Columns whose whole window is inside the row: the same scan over
            // the taps in the same order for every output, run across the
            // outputs so that the compiler can vectorise it.
            bool first = true;
            for (int64_t kh = rows.first; kh < rows.last; ++kh) {
              const float* line = src + (oh * sh - ph + kh * dh) * w - pw;
              for (int64_t kw = 0; kw < kw_n; ++kw) {
                const float* tap = line + kw * dw;
                if (first) {
                  for (int64_t ow = ow_lo; ow < ow_hi; ++ow) out_row[ow] = tap[ow * sw];
                  first = false;
                  continue;
                }
                for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
                  const float v = tap[ow * sw];
                  out_row[ow] = v > out_row[ow] ? v : out_row[ow];
                }
              }
            }
          }
          for (int64_t ow = 0; ow < ow_n; ++ow) {
            if (kind == PoolKind::kMax && rows.inside > 0 && ow >= ow_lo && ow < ow_hi) {
              ow = ow_hi - 1;  // done above
              continue;
            }
            const Taps cols = taps(ow, sw, pw, dw, kw_n, w, g.pad_end[1]);
            float best = -std::numeric_limits<float>::infinity();
            bool any = false;
            double sum = 0;
            for (int64_t kh = rows.first; kh < rows.last; ++kh) {
              const float* line = src + (oh * sh - ph + kh * dh) * w;
              for (int64_t kw = cols.first; kw < cols.last; ++kw) {
                const float v = line[ow * sw - pw + kw * dw];
                if (kind == PoolKind::kMax) {
                  if (!any || v > best) best = v;
                  any = true;
                } else {
                  sum += v;
                }
              }
            }
            if (kind == PoolKind::kMax) {
              dst[oh * ow_n + ow] = best;
            } else {
              const int64_t divisor = count_include_pad_ ? rows.padded * cols.padded : rows.inside * cols.inside;
              dst[oh * ow_n + ow] = static_cast<float>(divisor > 0 ? sum / divisor : 0.0);
            }
          }
        }
      }
    });
  }

  template <typename T>
  void Run(const Tensor& x, const SpatialGeometry& g, Tensor& y, Tensor* indices) const {
    const size_t rank = g.in.size();
    const int64_t planes = x.dims()[0] * x.dims()[1];
    const int64_t in_size = NumElements(g.in), out_size = NumElements(g.out);
    const int64_t window = NumElements(g.kernel);
    const T* px = x.data<T>();
    T* py = y.mutable_data<T>();
    ParallelFor(planes, 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> o_idx(rank), k_idx(rank), pos(rank);
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* src = px + plane * in_size;
        for (int64_t o = 0; o < out_size; ++o) {
          int64_t r = o;
          for (int64_t d = rank - 1; d >= 0; --d) {
            o_idx[d] = r % g.out[d];
            r /= g.out[d];
          }
          double best = -std::numeric_limits<double>::infinity();
          int64_t best_index = -1;
          double sum = 0;
          int64_t count = 0, padded_count = 0;
          for (int64_t k = 0; k < window; ++k) {
            int64_t kr = k;
            for (int64_t d = rank - 1; d >= 0; --d) {
              k_idx[d] = kr % g.kernel[d];
              kr /= g.kernel[d];
            }
            bool inside = true, in_padded = true;
            int64_t offset = 0;
            for (size_t d = 0; d < rank; ++d) {
              pos[d] = o_idx[d] * g.strides[d] - g.pad_begin[d] + k_idx[d] * g.dilations[d];
              if (pos[d] < 0 || pos[d] >= g.in[d]) inside = false;
              if (pos[d] < -g.pad_begin[d] || pos[d] >= g.in[d] + g.pad_end[d]) in_padded = false;
              offset = offset * g.in[d] + pos[d];
            }
            if (in_padded) ++padded_count;
            if (!inside) continue;
            double v = Load(src, offset);
            ++count;
            if (kind == PoolKind::kMax) {
              if (v > best || best_index < 0) {
                best = v;
                best_index = offset;
              }
            } else if (kind == PoolKind::kLp) {
              sum += std::pow(std::abs(v), p_);
            } else {
              sum += v;
            }
          }
          const int64_t out_index = plane * out_size + o;
          if (kind == PoolKind::kMax) {
            Store(py, out_index, best);
            if (indices != nullptr) {
              int64_t flat = best_index;
              if (storage_order_ == 1 && rank == 2) {  // column-major within the plane
                flat = (best_index % g.in[1]) * g.in[0] + best_index / g.in[1];
              }
              indices->mutable_data<int64_t>()[out_index] = plane * in_size + flat;
            }
          } else if (kind == PoolKind::kLp) {
            Store(py, out_index, std::pow(sum, 1.0 / p_));
          } else {
            int64_t divisor = count_include_pad_ ? padded_count : count;
            Store(py, out_index, divisor > 0 ? sum / divisor : 0.0);
          }
        }
      }
    });
  }

  ConvAttributes attrs_;
  bool count_include_pad_;
  int64_t storage_order_;
  double p_;  // LpPool's exponent
};

template <PoolKind kind>
class GlobalPool final : public OpKernel {
 public:
  explicit GlobalPool(const OpKernelInfo& info) : p_(static_cast<double>(info.AttrOr<int64_t>("p", 2))) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    if (x_in->rank() < 3) return ctx.Error("input must have rank >= 3, received " + DimsToString(x_in->dims()));
    Dims out_dims = {x_in->dims()[0], x_in->dims()[1]};
    for (int64_t i = 2; i < x_in->rank(); ++i) out_dims.push_back(1);
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, out_dims, x_in->type()));
    const Tensor x = UpcastToFloat(*x_in);
    Tensor y = IsHalfLike(x_in->type()) ? Tensor::Allocate(DataType::kFloat, out_dims) : *y_out;
    const int64_t planes = out_dims[0] * out_dims[1];
    const int64_t size = x.num_elements() / std::max<int64_t>(planes, 1);
    RETURN_IF_ERROR(DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = y.mutable_data<T>();
      ParallelFor(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, size)), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* src = px + p * size;
          if (kind == PoolKind::kMax) {
            T best = size > 0 ? src[0] : T(0);
            for (int64_t i = 1; i < size; ++i) best = src[i] > best ? src[i] : best;
            py[p] = best;
          } else if (kind == PoolKind::kLp) {
            double sum = 0;
            for (int64_t i = 0; i < size; ++i) sum += std::pow(std::abs(static_cast<double>(src[i])), p_);
            py[p] = static_cast<T>(std::pow(sum, 1.0 / p_));
          } else {
            double sum = 0;
            for (int64_t i = 0; i < size; ++i) sum += src[i];
            py[p] = static_cast<T>(size > 0 ? sum / size : 0);
          }
        }
      });
      return absl::OkStatus();
    }));
    if (IsHalfLike(x_in->type())) DowncastFromFloat(y, *y_out);
    return absl::OkStatus();
  }

 private:
  double p_;  // GlobalLpPool's exponent
};

}  // namespace

void RegisterPoolKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MaxPool").Since(1).Build(), MakeFactory<Pool<PoolKind::kMax>>());
  r.Register(KernelDefBuilder("AveragePool").Since(1).Build(), MakeFactory<Pool<PoolKind::kAverage>>());
  r.Register(KernelDefBuilder("LpPool").Since(2).Build(), MakeFactory<Pool<PoolKind::kLp>>());
  r.Register(KernelDefBuilder("GlobalAveragePool").Since(1).Types("T", kFloatTypes).Build(),
             MakeFactory<GlobalPool<PoolKind::kAverage>>());
  r.Register(KernelDefBuilder("GlobalMaxPool").Since(1).Types("T", kFloatTypes).Build(),
             MakeFactory<GlobalPool<PoolKind::kMax>>());
  r.Register(KernelDefBuilder("GlobalLpPool").Since(2).Types("T", kFloatTypes).Build(),
             MakeFactory<GlobalPool<PoolKind::kLp>>());
}

}  // namespace onyx
