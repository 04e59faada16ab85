// Spatial attributes shared by Conv, ConvTranspose and the pooling kernels:
// kernel_shape, strides, dilations, pads and auto_pad, resolved for one input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/op_kernel.h"
#include "onyx/tensor.h"

namespace onyx {

struct ConvAttributes {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel_shape;  // empty: taken from the weights
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begin..., end...
  bool ceil_mode = false;

  static ConvAttributes FromInfo(const OpKernelInfo& info);
};

// Everything a spatial kernel needs for one input shape.
struct SpatialGeometry {
  std::vector<int64_t> in;  // input spatial dims
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> pad_end;
  std::vector<int64_t> out;  // output spatial dims
};

// Resolves defaults and auto_pad for `input_spatial` with `kernel`; errors name
// the attribute and the expected vs received size.
absl::StatusOr<SpatialGeometry> ResolveGeometry(const ConvAttributes& attrs, const std::vector<int64_t>& input_spatial,
                                                const std::vector<int64_t>& kernel);

// ResolveGeometry as ONNX Runtime's pooling kernels resolve it: SAME_* pads
// are sized for the undilated kernel (then the dilated windows count the
// outputs), and the count divides with truncation toward zero (ceil_mode: in
// float, rounded up), so a window somewhat larger than the padded input gives
// 0 or 1 outputs rather than an error; a negative count is an error.
absl::StatusOr<SpatialGeometry> ResolvePoolGeometry(const ConvAttributes& attrs,
                                                    const std::vector<int64_t>& input_spatial);

// The checked geometry of one Conv-like call: X [N, C, D...] and W [M, C/group, k...].
struct ConvShape {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  SpatialGeometry geometry;
  Dims out_dims;  // [N, M, out...]
};

// Validates ranks, channel/group agreement and kernel_shape against W, then
// resolves the geometry; errors name the shapes involved.
absl::StatusOr<ConvShape> ResolveConvShape(const ConvAttributes& attrs, int64_t group, absl::Span<const int64_t> x,
                                           absl::Span<const int64_t> w);

}  // namespace onyx
