// Resize (opsets 10, 11, 13) and the deprecated Upsample (7, 9).
//
// Each axis gets a 1-D plan mapping output coordinates to input coordinates
// (per coordinate_transformation_mode) and, for linear/cubic, to a few
// (index, weight) taps chosen exactly as the ONNX reference does (nearest
// taps of an edge-padded axis, ties to the lower index). Nearest mode is a
// pure gather (any element type); linear and cubic apply the taps one axis at
// a time, which equals the reference's tensor-product interpolation.
#include <cmath>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeAttrs {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

// The taps of one axis: output j reads idx[first[j] .. first[j+1]) with
// weights w, or the extrapolation value when outside[j].
struct AxisPlan {
  std::vector<int64_t> first, idx;
  std::vector<double> w;
  std::vector<uint8_t> outside;
  bool any_outside = false;
};

absl::StatusOr<ResizeAttrs> ParseAttrs(const OpKernelInfo& info) {
  ResizeAttrs a;
  const bool legacy = info.node().op_type == "Upsample" || info.node().since_version < 11;
  const std::string mode = info.AttrOr<std::string>("mode", "nearest");
  if (mode == "nearest") a.mode = Mode::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") a.mode = Mode::kLinear;
  else if (mode == "cubic" && !legacy) a.mode = Mode::kCubic;
  else return info.Error(absl::StrCat("mode '", mode, "' is not supported"));
  if (legacy) {
    a.coord = Coord::kAsymmetric;
    a.rounding = Rounding::kSimple;
    return a;
  }
  const std::string coord = info.AttrOr<std::string>("coordinate_transformation_mode", "half_pixel");
  static const std::pair<const char*, Coord> kCoords[] = {{"half_pixel", Coord::kHalfPixel},
                                                          {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
                                                          {"align_corners", Coord::kAlignCorners},
                                                          {"asymmetric", Coord::kAsymmetric},
                                                          {"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn},
                                                          {"tf_crop_and_resize", Coord::kTfCropAndResize}};
  bool found = false;
  for (const auto& [name, value] : kCoords) {
    if (coord == name) a.coord = value, found = true;
  }
  if (!found) return info.Error(absl::StrCat("coordinate_transformation_mode '", coord, "' is not supported"));
  const std::string rounding = info.AttrOr<std::string>("nearest_mode", "round_prefer_floor");
  if (rounding == "round_prefer_floor") a.rounding = Rounding::kRoundPreferFloor;
  else if (rounding == "round_prefer_ceil") a.rounding = Rounding::kRoundPreferCeil;
  else if (rounding == "floor") a.rounding = Rounding::kFloor;
  else if (rounding == "ceil") a.rounding = Rounding::kCeil;
  else return info.Error(absl::StrCat("nearest_mode '", rounding, "' is not supported"));
  a.cubic_a = info.AttrOr<float>("cubic_coeff_a", -0.75f);
  a.exclude_outside = info.AttrOr<int64_t>("exclude_outside", 0) != 0;
  a.extrapolation = info.AttrOr<float>("extrapolation_value", 0.0f);
  return a;
}

// Input coordinate of output coordinate x; `outside` set for tf_crop_and_resize
// coordinates beyond the input.
double OriginalCoordinate(const ResizeAttrs& a, double x, double scale, int64_t in, double roi_start, double roi_end,
                          bool* outside) {
  const double out_width = scale * static_cast<double>(in);
  *outside = false;
  switch (a.coord) {
    case Coord::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case Coord::kPytorchHalfPixel: return out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case Coord::kAlignCorners: return out_width == 1 ? 0.0 : x * (in - 1) / (out_width - 1);
    case Coord::kAsymmetric: return x / scale;
    case Coord::kTfHalfPixelForNn: return (x + 0.5) / scale;
    case Coord::kTfCropAndResize: {
      double v = out_width == 1 ? (roi_end - roi_start) * (in - 1) / 2
                                : x * (roi_end - roi_start) * (in - 1) / (out_width - 1);
      v += roi_start * (in - 1);
      *outside = v < 0 || v > in - 1;
      return v;
    }
  }
  return 0;
}

int64_t NearestIndex(Rounding r, double x, double scale) {
  const double fl = std::floor(x);
  if (x == fl) return static_cast<int64_t>(fl);
  const double ratio = x - fl;
  switch (r) {
    case Rounding::kRoundPreferFloor: return static_cast<int64_t>(ratio <= 0.5 ? fl : fl + 1);
    case Rounding::kRoundPreferCeil: return static_cast<int64_t>(ratio < 0.5 ? fl : fl + 1);
    case Rounding::kFloor: return static_cast<int64_t>(fl);
    case Rounding::kCeil: return static_cast<int64_t>(fl + 1);
    case Rounding::kSimple: return scale < 1 ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  }
  return 0;
}

void Coefficients(const ResizeAttrs& a, double ratio, std::vector<double>* c) {
  if (a.mode == Mode::kLinear) {
    *c = {1 - ratio, ratio};
    return;
  }
  const double A = a.cubic_a, r = ratio, s = 1 - ratio;
  *c = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
        ((A + 2) * s - (A + 3)) * s * s + 1, ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
}

AxisPlan PlanAxis(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisPlan p;
  p.first.push_back(0);
  std::vector<double> c;
  for (int64_t j = 0; j < out; ++j) {
    bool outside;
    const double x = OriginalCoordinate(a, static_cast<double>(j), scale, in, roi_start, roi_end, &outside);
    p.outside.push_back(outside);
    p.any_outside |= outside;
    if (a.mode == Mode::kNearest) {
      p.idx.push_back(std::clamp<int64_t>(NearestIndex(a.rounding, x, scale), 0, in - 1));
      p.w.push_back(1.0);
    } else if (!outside) {
      const double fl = std::floor(x);
      const bool integral = x == fl;
      const double ratio = integral ? 1.0 : x - fl;
      Coefficients(a, ratio, &c);
      const int64_t n = static_cast<int64_t>(c.size()), pad = (n + 1) / 2;
      // The reference takes the n taps nearest to x on the axis padded by
      // `pad` edge copies; far outside, the window stops at the padding.
      int64_t start = static_cast<int64_t>(fl) - n / 2 + (integral ? 0 : 1);
      start = std::clamp<int64_t>(start, -pad, in + pad - n);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t i = start + k;
        if (a.exclude_outside && (i < 0 || i >= in)) c[k] = 0;
        sum += c[k];
      }
      for (int64_t k = 0; k < n; ++k) {
        const double w = a.exclude_outside && sum != 0 ? c[k] / sum : c[k];
        if (w == 0) continue;
        p.idx.push_back(std::clamp<int64_t>(start + k, 0, in - 1));
        p.w.push_back(w);
      }
    }
    p.first.push_back(static_cast<int64_t>(p.idx.size()));
  }
  return p;
}

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
    ASSIGN_OR_RETURN(ResizeAttrs attrs, ParseAttrs(info));
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
    Dims out_dims(rank);
    const Tensor* sizes = sizes_input_ >= 0 ? ctx.Input(sizes_input_) : nullptr;
    const Tensor* scales_t = scales_input_ >= 0 ? ctx.Input(scales_input_) : nullptr;
    if (sizes != nullptr && sizes->num_elements() > 0) {
      std::vector<int64_t> sz;
      absl::Status s = ReadInt64s(*sizes, "input 'sizes'", &sz);
      if (!s.ok()) return ctx.Error(s.message());
      if (static_cast<int64_t>(sz.size()) != rank) {
        return ctx.Error(absl::StrCat("sizes has ", sz.size(), " entries but the input has rank ", rank));
      }
      for (int64_t a = 0; a < rank; ++a) {
        if (sz[a] < 0) return ctx.Error(absl::StrCat("sizes[", a, "] = ", sz[a], " is negative"));
        out_dims[a] = sz[a];
        scales.push_back(x.dims()[a] == 0 ? 1.0 : static_cast<double>(sz[a]) / static_cast<double>(x.dims()[a]));
      }
    } else {
      if (scales_t != nullptr) {
        RETURN_IF_ERROR(ReadDoubles(ctx, *scales_t, "scales", &scales));
      } else {
        scales.assign(scales_attr_.begin(), scales_attr_.end());
      }
      if (static_cast<int64_t>(scales.size()) != rank) {
        return ctx.Error(absl::StrCat("scales has ", scales.size(), " entries but the input has rank ", rank,
                                      " (and no sizes were given)"));
      }
      for (int64_t a = 0; a < rank; ++a) {
        if (!(scales[a] > 0)) return ctx.Error(absl::StrCat("scales[", a, "] = ", scales[a], " must be positive"));
        const double size = std::floor(static_cast<double>(x.dims()[a]) * scales[a]);
        if (!(size < static_cast<double>(int64_t{1} << 48))) {
          return ctx.Error(absl::StrCat("scales[", a, "] = ", scales[a], " makes the output too large"));
        }
        out_dims[a] = static_cast<int64_t>(size);
      }
    }
    if (attrs_.coord == Coord::kTfCropAndResize) {
      const Tensor* roi_t = roi_input_ >= 0 ? ctx.Input(roi_input_) : nullptr;
      if (roi_t != nullptr && roi_t->num_elements() > 0) RETURN_IF_ERROR(ReadDoubles(ctx, *roi_t, "roi", &roi));
      if (static_cast<int64_t>(roi.size()) != 2 * rank) {
        return ctx.Error(
            absl::StrCat("tf_crop_and_resize needs roi with ", 2 * rank, " entries, received ", roi.size()));
      }
    }
    RETURN_IF_ERROR(CheckOutputDims(ctx, out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    if (x.num_elements() == 0) return ctx.Error("cannot resize an empty input to a non-empty output");
    std::vector<AxisPlan> plans(rank);
    for (int64_t a = 0; a < rank; ++a) {
      const double rs = roi.empty() ? 0 : roi[a], re = roi.empty() ? 1 : roi[a + rank];
      plans[a] = PlanAxis(attrs_, x.dims()[a], out_dims[a], scales[a], rs, re);
    }
    if (attrs_.mode == Mode::kNearest) return Nearest(ctx, x, plans, *y);
    return DispatchTypes<float, double, Half, BFloat16, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
                         uint64_t>(x.type(), [&](auto tag) {
      using T = decltype(tag);
      using C = std::conditional_t<std::is_same_v<T, double> || sizeof(T) == 8, double, float>;
      return Interpolate<T, C>(x, plans, *y);
    });
  }

 private:
  explicit Resize(ResizeAttrs attrs) : attrs_(attrs) {}

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
    for (int64_t axis = 0; axis < rank; ++axis) {
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
  r.Register(KernelDefBuilder("Resize").Since(10, 17).Build(), MakeFactory<Resize>());
  r.Register(KernelDefBuilder("Upsample").Since(7, 9).Build(), MakeFactory<Resize>());
}

}  // namespace onyx
