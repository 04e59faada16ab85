// Per-axis plans of Resize: which input elements (and with what weights) each
// output element along one axis reads. Resize applies one plan per axis, so
// every mode here is separable: nearest is a gather, linear and cubic sum a
// few taps, and antialiased linear/cubic (Resize-18) sum a filter stretched
// by 1 / scale when downscaling.
//
//   ASSIGN_OR_RETURN(ResizeAttrs attrs, ParseResizeAttrs(info));
//   AxisPlan p = PlanAxis(attrs, /*in=*/8, /*out=*/4, /*scale=*/0.5, 0, 1);
//   // output j along the axis = sum over t in [p.first[j], p.first[j+1])
//   //                           of p.w[t] * input[p.idx[t]]
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/op_kernel.h"

namespace onyx {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class ResizeCoord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class ResizeRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeRounding rounding = ResizeRounding::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;  // Resize-18; only linear and cubic use it
  AspectPolicy policy = AspectPolicy::kStretch;
  std::vector<int64_t> axes;  // Resize-18; empty means every axis
};

// The taps of one axis: output j reads idx[first[j] .. first[j+1]) with
// weights w, or the extrapolation value when outside[j].
struct AxisPlan {
  std::vector<int64_t> first, idx;
  std::vector<double> w;
  std::vector<uint8_t> outside;
  bool any_outside = false;
};

// The node's attributes for its version (Upsample and Resize-10 know fewer);
// INVALID_ARGUMENT naming the node for a value the version does not define.
absl::StatusOr<ResizeAttrs> ParseResizeAttrs(const OpKernelInfo& info);

// The plan of an axis of `in` elements resized to `out` with factor `scale`
// (and, for tf_crop_and_resize, the region [roi_start, roi_end] in [0, 1]).
AxisPlan PlanAxis(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start, double roi_end);

}  // namespace onyx
