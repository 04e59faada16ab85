#include "providers/cpu/tensor/resize_plan.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

// Input coordinate of output coordinate x; `outside` set for tf_crop_and_resize
// coordinates beyond the input.
double OriginalCoordinate(const ResizeAttrs& a, double x, double scale, int64_t in, int64_t out, double roi_start,
                          double roi_end, bool* outside) {
  const double out_width = scale * static_cast<double>(in);
  *outside = false;
  switch (a.coord) {
    case ResizeCoord::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoord::kHalfPixelSymmetric: {
      // Centres the sampled region when the output length was rounded:
      // the part of the scaled extent beyond `out` is split on both sides.
      const double adjustment = static_cast<double>(out) / out_width;
      const double offset = static_cast<double>(in) / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case ResizeCoord::kPytorchHalfPixel: return out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case ResizeCoord::kAlignCorners: return out_width == 1 ? 0.0 : x * (in - 1) / (out_width - 1);
    case ResizeCoord::kAsymmetric: return x / scale;
    case ResizeCoord::kTfHalfPixelForNn: return (x + 0.5) / scale;
    case ResizeCoord::kTfCropAndResize: {
      double v = out_width == 1 ? (roi_end - roi_start) * (in - 1) / 2
                                : x * (roi_end - roi_start) * (in - 1) / (out_width - 1);
      v += roi_start * (in - 1);
      *outside = v < 0 || v > in - 1;
      return v;
    }
  }
  return 0;
}

int64_t NearestIndex(ResizeRounding r, double x, double scale) {
  const double fl = std::floor(x);
  if (x == fl) return static_cast<int64_t>(fl);
  const double ratio = x - fl;
  switch (r) {
    case ResizeRounding::kRoundPreferFloor: return static_cast<int64_t>(ratio <= 0.5 ? fl : fl + 1);
    case ResizeRounding::kRoundPreferCeil: return static_cast<int64_t>(ratio < 0.5 ? fl : fl + 1);
    case ResizeRounding::kFloor: return static_cast<int64_t>(fl);
    case ResizeRounding::kCeil: return static_cast<int64_t>(fl + 1);
    case ResizeRounding::kSimple: return scale < 1 ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  }
  return 0;
}

void Coefficients(const ResizeAttrs& a, double ratio, std::vector<double>* c) {
  if (a.mode == ResizeMode::kLinear) {
    *c = {1 - ratio, ratio};
    return;
  }
  const double A = a.cubic_a, r = ratio, s = 1 - ratio;
  *c = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
        ((A + 2) * s - (A + 3)) * s * s + 1, ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
}

// The triangle (linear) or Keys cubic filter the antialiased modes stretch.
double Filter(const ResizeAttrs& a, double x) {
  x = std::abs(x);
  if (a.mode == ResizeMode::kLinear) return x < 1 ? 1 - x : 0;
  const double A = a.cubic_a;
  if (x < 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * A;
  return 0;
}

// Antialiased linear/cubic, as ONNX Runtime computes it (after Pillow): the
// filter's support (1 for linear, 2 for cubic) grows by 1 / scale when
// downscaling, the window is the input elements whose centres fall in it,
// taps beyond the input fold onto the edge element (or are dropped with
// exclude_outside), and the weights are normalised to sum 1.
AxisPlan PlanAntialias(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisPlan p;
  p.first.push_back(0);
  const double stretch = std::max(1.0, 1.0 / scale);  // ONNX Runtime's 1 / scale when >= 1
  const double support = (a.mode == ResizeMode::kLinear ? 1.0 : 2.0) * stretch;
  const int64_t window = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  std::vector<double> buf(window);
  for (int64_t j = 0; j < out; ++j) {
    bool outside = false;
    const double x = scale == 1
                         ? static_cast<double>(j)
                         : OriginalCoordinate(a, static_cast<double>(j), scale, in, out, roi_start, roi_end, &outside);
    p.outside.push_back(outside);
    p.any_outside |= outside;
    const double center = x + 0.5;
    const int64_t lo_real = static_cast<int64_t>(std::floor(center - support + 0.5));
    int64_t hi_real = static_cast<int64_t>(std::floor(center + support + 0.5));
    hi_real = lo_real + std::clamp<int64_t>(hi_real - lo_real, 0, window);
    const int64_t lo_cut = std::clamp<int64_t>(lo_real, 0, in), hi_cut = std::clamp<int64_t>(hi_real, 0, in);
    const int64_t lo = a.exclude_outside ? lo_cut : lo_real, len = (a.exclude_outside ? hi_cut : hi_real) - lo;
    double total = 0;
    for (int64_t k = 0; k < len; ++k) {
      buf[k] = Filter(a, (static_cast<double>(k + lo) - center + 0.5) / stretch);
      total += buf[k];
    }
    if (!a.exclude_outside && lo_cut < hi_cut) {
      const int64_t below = std::clamp<int64_t>(-lo, 0, len - 1);
      for (int64_t k = 0; k < below; ++k) buf[below] += buf[k];
      const int64_t above = std::clamp<int64_t>(len + lo - in, 0, len - 1);
      for (int64_t k = len - above; k < len; ++k) buf[len - above - 1] += buf[k];
      if (below > 0) {
        for (int64_t k = 0; k < hi_cut - lo_cut; ++k) buf[k] = buf[k + below];
      }
    }
    const double norm = total == 0 ? 1 : 1 / total;
    for (int64_t k = 0; k < hi_cut - lo_cut; ++k) {
      p.idx.push_back(lo_cut + k);
      p.w.push_back(buf[k] * norm);
    }
    p.first.push_back(static_cast<int64_t>(p.idx.size()));
  }
  return p;
}

bool Lookup(const std::string& value, std::initializer_list<std::pair<const char*, int>> table, int* out) {
  for (const auto& [name, v] : table) {
    if (value == name) {
      *out = v;
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<ResizeAttrs> ParseResizeAttrs(const OpKernelInfo& info) {
  ResizeAttrs a;
  const int version = info.node().since_version;
  const bool legacy = info.node().op_type == "Upsample" || version < 11;
  const std::string mode = info.AttrOr<std::string>("mode", "nearest");
  if (mode == "nearest") a.mode = ResizeMode::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") a.mode = ResizeMode::kLinear;
  else if (mode == "cubic" && !legacy) a.mode = ResizeMode::kCubic;
  else return info.Error(absl::StrCat("mode '", mode, "' is not supported"));
  if (legacy) {
    a.coord = ResizeCoord::kAsymmetric;
    a.rounding = ResizeRounding::kSimple;
    return a;
  }
  int v = 0;
  // half_pixel_symmetric is Resize-19's; ONNX Runtime accepts it at 11-18 too.
  const std::string coord = info.AttrOr<std::string>("coordinate_transformation_mode", "half_pixel");
  if (!Lookup(coord,
              {{"half_pixel", static_cast<int>(ResizeCoord::kHalfPixel)},
               {"half_pixel_symmetric", static_cast<int>(ResizeCoord::kHalfPixelSymmetric)},
               {"pytorch_half_pixel", static_cast<int>(ResizeCoord::kPytorchHalfPixel)},
               {"align_corners", static_cast<int>(ResizeCoord::kAlignCorners)},
               {"asymmetric", static_cast<int>(ResizeCoord::kAsymmetric)},
               {"tf_half_pixel_for_nn", static_cast<int>(ResizeCoord::kTfHalfPixelForNn)},
               {"tf_crop_and_resize", static_cast<int>(ResizeCoord::kTfCropAndResize)}},
              &v)) {
    return info.Error(absl::StrCat("coordinate_transformation_mode '", coord, "' is not supported"));
  }
  a.coord = static_cast<ResizeCoord>(v);
  const std::string rounding = info.AttrOr<std::string>("nearest_mode", "round_prefer_floor");
  if (!Lookup(rounding,
              {{"round_prefer_floor", static_cast<int>(ResizeRounding::kRoundPreferFloor)},
               {"round_prefer_ceil", static_cast<int>(ResizeRounding::kRoundPreferCeil)},
               {"floor", static_cast<int>(ResizeRounding::kFloor)},
               {"ceil", static_cast<int>(ResizeRounding::kCeil)}},
              &v)) {
    return info.Error(absl::StrCat("nearest_mode '", rounding, "' is not supported"));
  }
  a.rounding = static_cast<ResizeRounding>(v);
  a.cubic_a = info.AttrOr<float>("cubic_coeff_a", -0.75f);
  a.exclude_outside = info.AttrOr<int64_t>("exclude_outside", 0) != 0;
  a.extrapolation = info.AttrOr<float>("extrapolation_value", 0.0f);
  if (version < 18) return a;
  a.antialias = info.AttrOr<int64_t>("antialias", 0) != 0;
  const std::string policy = info.AttrOr<std::string>("keep_aspect_ratio_policy", "stretch");
  if (!Lookup(policy,
              {{"stretch", static_cast<int>(AspectPolicy::kStretch)},
               {"not_larger", static_cast<int>(AspectPolicy::kNotLarger)},
               {"not_smaller", static_cast<int>(AspectPolicy::kNotSmaller)}},
              &v)) {
    return info.Error(absl::StrCat("keep_aspect_ratio_policy '", policy,
                                   "' is not one of stretch, not_larger, "
                                   "not_smaller"));
  }
  a.policy = static_cast<AspectPolicy>(v);
  a.axes = info.AttrOr<std::vector<int64_t>>("axes", {});
  return a;
}

AxisPlan PlanAxis(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  if (a.antialias && a.mode != ResizeMode::kNearest) return PlanAntialias(a, in, out, scale, roi_start, roi_end);
  AxisPlan p;
  p.first.push_back(0);
  std::vector<double> c;
  for (int64_t j = 0; j < out; ++j) {
    bool outside;
    const double x = OriginalCoordinate(a, static_cast<double>(j), scale, in, out, roi_start, roi_end, &outside);
    p.outside.push_back(outside);
    p.any_outside |= outside;
    if (a.mode == ResizeMode::kNearest) {
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

}  // namespace onyx
