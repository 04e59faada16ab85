// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (7, 9).
//
// Each axis gets a 1-D plan (resize_plan.h) mapping output coordinates to
// input taps. Nearest mode is a pure gather (any element type); linear and
// cubic apply the taps one axis at a time, which equals the reference's
// tensor-product interpolation. Resize-18 adds `axes` (scales, sizes and roi
// name only those axes), keep_aspect_ratio_policy (one factor for all the
// named axes of `sizes`) and antialias.
#include <cmath>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/resize_plan.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

// One interpolation pass along `axis` of a [outer, in, inner] buffer.
template <typename C>
void InterpolateAxis(const AxisPlan& p, const C* src, C* dst, int64_t outer, int64_t in, int64_t out, int64_t inner,
                     C extrapolation) {
  ParallelFor(outer * out, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, inner)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / out, j = k % out;
      C* d = dst + k * inner;
      if (p.outside[j]) {
        std::fill(d, d + inner, extrapolation);
        continue;
      }
      std::fill(d, d + inner, C(0));
      for (int64_t t = p.first[j]; t < p.first[j + 1]; ++t) {
        const C w = static_cast<C>(p.w[t]);
        const C* s = src + (o * in + p.idx[t]) * inner;
        for (int64_t i = 0; i < inner; ++i) d[i] += w * s[i];
      }
    }
  });
}

class Resize final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(ResizeAttrs attrs, ParseResizeAttrs(info));
    auto k = std::unique_ptr<Resize>(new Resize(attrs));
    const std::string& op = info.node().op_type;
    const int v = info.node().since_version;
    if (op == "Upsample" && v < 9) {
      k->scales_attr_ = info.AttrOr<std::vector<float>>("scales", {});
      k->scales_input_ = -1;
    } else if (op == "Upsample" || v < 11) {
      k->scales_input_ = 1;
    } else {
      k->roi_input_ = 1;
      k->scales_input_ = 2;
      k->sizes_input_ = 3;
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const int64_t rank = x.rank();
    std::vector<double> scales, roi;
    Dims out_dims;
    RETURN_IF_ERROR(Geometry(ctx, x, &scales, &out_dims, &roi));
    RETURN_IF_ERROR(CheckOutputDims(ctx, out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    if (x.num_elements() == 0) return ctx.Error("cannot resize an empty input to a non-empty output");
    std::vector<AxisPlan> plans(rank);
    for (int64_t a = 0; a < rank; ++a) {
      const double rs = roi.empty() ? 0 : roi[a], re = roi.empty() ? 1 : roi[a + rank];
      plans[a] = PlanAxis(attrs_, x.dims()[a], out_dims[a], scales[a], rs, re);
    }
    if (attrs_.mode == ResizeMode::kNearest) return Nearest(ctx, x, plans, *y);
    return DispatchTypes<float, double, Half, BFloat16, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
                         uint64_t>(x.type(), [&](auto tag) {
      using T = decltype(tag);
      using C = std::conditional_t<std::is_same_v<T, double> || sizeof(T) == 8, double, float>;
      return Interpolate<T, C>(x, plans, *y);
    });
  }

 private:
  explicit Resize(ResizeAttrs attrs) : attrs_(std::move(attrs)) {}

  // The axes that sizes, scales and roi describe: Resize-18's `axes`
  // (negative counts from the back, no repeats) or every axis.
  absl::StatusOr<std::vector<int64_t>> NamedAxes(const OpKernelContext& ctx, int64_t rank) const {
    std::vector<int64_t> axes = attrs_.axes;
    if (axes.empty()) {
      for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
      return axes;
    }
    std::vector<bool> seen(rank, false);
    for (int64_t& a : axes) {
      const int64_t given = a;
      if (!NormalizeAxis(a, rank)) {
        return ctx.Error(absl::StrCat("axes entry ", given, " is out of range for rank ", rank));
      }
      if (seen[a]) return ctx.Error(absl::StrCat("axes names axis ", a, " more than once"));
      seen[a] = true;
    }
    return axes;
  }

  // Output dims, per-axis scales and (tf_crop_and_resize) the full-rank roi
  // from the inputs: sizes win over scales; axes not named keep their size
  // with scale 1 and the whole of their extent as roi.
  absl::Status Geometry(const OpKernelContext& ctx, const Tensor& x, std::vector<double>* scales, Dims* out_dims,
                        std::vector<double>* roi) const {
    const int64_t rank = x.rank();
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, NamedAxes(ctx, rank));
    const size_t n = axes.size();
    const std::string expected =
        attrs_.axes.empty() ? absl::StrCat("the input's rank ", rank) : absl::StrCat("the ", n, " axes");
    scales->assign(rank, 1.0);
    *out_dims = x.dims();
    const Tensor* sizes = sizes_input_ >= 0 ? ctx.Input(sizes_input_) : nullptr;
    const Tensor* scales_t = scales_input_ >= 0 ? ctx.Input(scales_input_) : nullptr;
    if (sizes != nullptr && sizes->num_elements() > 0) {
      std::vector<int64_t> sz;
      absl::Status s = ReadInt64s(*sizes, "input 'sizes'", &sz);
      if (!s.ok()) return ctx.Error(s.message());
      if (sz.size() != n) return ctx.Error(absl::StrCat("sizes has ", sz.size(), " entries, expected ", expected));
      for (size_t i = 0; i < n; ++i) {
        if (sz[i] < 0) return ctx.Error(absl::StrCat("sizes[", i, "] = ", sz[i], " is negative"));
        const int64_t in = x.dims()[axes[i]];
        (*out_dims)[axes[i]] = sz[i];
        (*scales)[axes[i]] = in == 0 ? 1.0 : static_cast<double>(sz[i]) / static_cast<double>(in);
      }
      if (attrs_.policy != AspectPolicy::kStretch) KeepAspectRatio(x.dims(), axes, scales, out_dims);
    } else {
      std::vector<double> given;
      if (scales_t != nullptr) {
        RETURN_IF_ERROR(ReadDoubles(ctx, *scales_t, "scales", &given));
      } else {
        given.assign(scales_attr_.begin(), scales_attr_.end());
      }
      if (given.size() != n) {
        return ctx.Error(
            absl::StrCat("scales has ", given.size(), " entries, expected ", expected, " (and no sizes were given)"));
      }
      for (size_t i = 0; i < n; ++i) {
        if (!(given[i] > 0)) return ctx.Error(absl::StrCat("scales[", i, "] = ", given[i], " must be positive"));
        const double size = std::floor(static_cast<double>(x.dims()[axes[i]]) * given[i]);
        if (!(size < static_cast<double>(int64_t{1} << 48))) {
          return ctx.Error(absl::StrCat("scales[", i, "] = ", given[i], " makes the output too large"));
        }
        (*out_dims)[axes[i]] = static_cast<int64_t>(size);
        (*scales)[axes[i]] = given[i];
      }
    }
    if (attrs_.coord == ResizeCoord::kTfCropAndResize) {
      const Tensor* roi_t = roi_input_ >= 0 ? ctx.Input(roi_input_) : nullptr;
      std::vector<double> given;
      if (roi_t != nullptr && roi_t->num_elements() > 0) RETURN_IF_ERROR(ReadDoubles(ctx, *roi_t, "roi", &given));
      if (given.size() != 2 * n) {
        return ctx.Error(absl::StrCat("tf_crop_and_resize needs roi with ", 2 * n, " entries (twice ", expected,
                                      "), received ", given.size()));
      }
      roi->assign(2 * rank, 0.0);
      std::fill(roi->begin() + rank, roi->end(), 1.0);
      for (size_t i = 0; i < n; ++i) {
        (*roi)[axes[i]] = given[i];
        (*roi)[axes[i] + rank] = given[i + n];
      }
    }
    return absl::OkStatus();
  }

  // keep_aspect_ratio_policy: one factor for every named axis, the smallest
  // (not_larger) or largest (not_smaller) of size / input, and sizes
  // round(factor * input). In float, as ONNX Runtime computes it, so that
  // the rounding of the sizes agrees.
  void KeepAspectRatio(const Dims& in, const std::vector<int64_t>& axes, std::vector<double>* scales, Dims* out) const {
    const bool not_larger = attrs_.policy == AspectPolicy::kNotLarger;
    float factor = not_larger ? std::numeric_limits<float>::max() : std::numeric_limits<float>::min();
    for (int64_t a : axes) {
      const float r = in[a] == 0 ? 1.0f : static_cast<float>((*out)[a]) / static_cast<float>(in[a]);
      factor = not_larger ? std::min(factor, r) : std::max(factor, r);
    }
    for (int64_t a : axes) {
      (*scales)[a] = factor;
      (*out)[a] = static_cast<int64_t>(std::round(factor * static_cast<float>(in[a])));
    }
  }

  static absl::Status ReadDoubles(const OpKernelContext& ctx, const Tensor& t, absl::string_view what,
                                  std::vector<double>* out) {
    Tensor d = Tensor::Allocate(DataType::kDouble, {t.num_elements()});
    absl::Status s = t.type() == DataType::kString ? absl::InvalidArgumentError("strings") : CastElements(t, d);
    if (!s.ok()) {
      return ctx.Error(absl::StrCat("input '", what, "' must be numeric, received ", DataTypeName(t.type())));
    }
    out->assign(d.data<double>(), d.data<double>() + d.num_elements());
    return absl::OkStatus();
  }

  absl::Status Nearest(OpKernelContext& ctx, const Tensor& x, const std::vector<AxisPlan>& plans, Tensor& y) const {
    std::vector<std::vector<int64_t>> maps;
    bool any_outside = false;
    for (const auto& p : plans) {
      maps.push_back(p.idx);
      any_outside |= p.any_outside;
    }
    AxisMapCopy(x.type(), x.raw(), x.dims(), y.mutable_raw(), maps);
    if (!any_outside) return absl::OkStatus();
    ASSIGN_OR_RETURN(Tensor fill, ScalarOf(x.type(), attrs_.extrapolation));
    const Dims& od = y.dims();
    Dims index(od.size(), 0);
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      bool out = false;
      for (size_t a = 0; a < od.size(); ++a) out |= plans[a].outside[index[a]] != 0;
      if (out) CopyElements(x.type(), fill.raw(), 0, y.mutable_raw(), i, 1);
      for (int64_t a = static_cast<int64_t>(od.size()) - 1; a >= 0; --a) {
        if (++index[a] < od[a]) break;
        index[a] = 0;
      }
    }
    return absl::OkStatus();
  }

  // Whether axis `a` maps input to output one to one.
  static bool IsIdentity(const AxisPlan& p, int64_t in, int64_t out) {
    bool identity = out == in && !p.any_outside;
    for (int64_t j = 0; identity && j < out; ++j) {
      identity = p.first[j + 1] - p.first[j] == 1 && p.idx[p.first[j]] == j && p.w[p.first[j]] == 1.0;
    }
    return identity;
  }

  // Float images resized along two adjacent axes only (H, W of NCHW or of
  // NHWC): each output row interpolates its input rows once into a row
  // buffer and then its columns from it, straight into the output. The sums
  // run in the same order as the axis-by-axis passes, so the values are the
  // same; only the full-size intermediates and copies are gone. False when
  // the case is another.
  static bool InterpolateTwoAxes(const Tensor& x, const std::vector<AxisPlan>& plans, Tensor& y) {
    const int64_t rank = x.rank();
    int64_t first = -1, resized = 0;
    for (int64_t a = 0; a < rank; ++a) {
      if (plans[a].any_outside) return false;
      if (IsIdentity(plans[a], x.dims()[a], y.dims()[a])) continue;
      if (first < 0) first = a;
      ++resized;
    }
    if (resized != 2 || first + 1 >= rank || IsIdentity(plans[first + 1], x.dims()[first + 1], y.dims()[first + 1])) {
      return false;
    }
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < first; ++a) outer *= x.dims()[a];
    for (int64_t a = first + 2; a < rank; ++a) inner *= x.dims()[a];
    const int64_t h = x.dims()[first], w = x.dims()[first + 1], oh_n = y.dims()[first], ow_n = y.dims()[first + 1];
    const AxisPlan &ph = plans[first], &pw = plans[first + 1];
    std::vector<float> wh(ph.w.begin(), ph.w.end()), ww(pw.w.begin(), pw.w.end());
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    ParallelFor(outer * oh_n, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, ow_n * inner)),
                [&](int64_t begin, int64_t end) {
      std::vector<float> row(w * inner);
      for (int64_t k = begin; k < end; ++k) {
        const int64_t o = k / oh_n, oh = k % oh_n;
        std::fill(row.begin(), row.end(), 0.f);
        for (int64_t t = ph.first[oh]; t < ph.first[oh + 1]; ++t) {
          const float wt = wh[t];
          const float* src = px + (o * h + ph.idx[t]) * w * inner;
          for (int64_t i = 0; i < w * inner; ++i) row[i] += wt * src[i];
        }
        float* dst = py + k * ow_n * inner;
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          float* d = dst + ow * inner;
          std::fill(d, d + inner, 0.f);
          for (int64_t t = pw.first[ow]; t < pw.first[ow + 1]; ++t) {
            const float wt = ww[t];
            const float* s = row.data() + pw.idx[t] * inner;
            for (int64_t i = 0; i < inner; ++i) d[i] += wt * s[i];
          }
        }
      }
    });
    return true;
  }

  template <typename T, typename C>
  absl::Status Interpolate(const Tensor& x, const std::vector<AxisPlan>& plans, Tensor& y) const {
    if constexpr (std::is_same_v<T, float>) {
      if (InterpolateTwoAxes(x, plans, y)) return absl::OkStatus();
    }
    const int64_t rank = x.rank();
    Dims cur = x.dims();
    std::vector<C> a(x.num_elements()), b;
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) a[i] = ToFloat(in[i]);
      else a[i] = static_cast<C>(in[i]);
    }
    // Antialiased passes run from the last axis to the first and, for
    // integers, round after each pass, as ONNX Runtime's do (it keeps the
    // intermediate image in the element type), so integer results agree.
    const bool antialias = attrs_.antialias;
    for (int64_t step = 0; step < rank; ++step) {
      const int64_t axis = antialias ? rank - 1 - step : step;
      const AxisPlan& p = plans[axis];
      const int64_t out = y.dims()[axis];
      if (IsIdentity(p, cur[axis], out)) continue;
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= cur[d];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= cur[d];
      b.assign(outer * out * inner, C(0));
      InterpolateAxis<C>(p, a.data(), b.data(), outer, cur[axis], out, inner, static_cast<C>(attrs_.extrapolation));
      cur[axis] = out;
      a.swap(b);
      if constexpr (std::is_integral_v<T>) {
        if (antialias) {
          for (C& v : a) {
            // Pillow's 8-bit arithmetic rounds halves up; ONNX Runtime's
            // int32 path uses std::round.
            v = sizeof(T) == 1 ? std::floor(v + C(0.5)) : std::round(v);
            v = std::clamp<C>(v, static_cast<C>(std::numeric_limits<T>::lowest()),
                              static_cast<C>(std::numeric_limits<T>::max()));
          }
        }
      }
    }
    T* o = y.mutable_data<T>();
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      if constexpr (std::is_same_v<T, Half>) o[i] = Half{FloatToHalf(a[i])};
      else if constexpr (std::is_same_v<T, BFloat16>) o[i] = BFloat16{FloatToBFloat16(a[i])};
      else if constexpr (std::is_integral_v<T>) {
        const C r = std::nearbyint(a[i]);
        o[i] = static_cast<T>(std::clamp<C>(r, static_cast<C>(std::numeric_limits<T>::lowest()),
                                            static_cast<C>(std::numeric_limits<T>::max())));
      } else {
        o[i] = static_cast<T>(a[i]);
      }
    }
    return absl::OkStatus();
  }

  ResizeAttrs attrs_;
  std::vector<float> scales_attr_;  // Upsample-7
  int roi_input_ = -1, scales_input_ = -1, sizes_input_ = -1;
};

}  // namespace

void RegisterResizeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Resize").Since(10, 19).Build(), MakeFactory<Resize>());
  r.Register(KernelDefBuilder("Upsample").Since(7, 9).Build(), MakeFactory<Resize>());
}

}  // namespace onyx
