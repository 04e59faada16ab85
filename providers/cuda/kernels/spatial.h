// Spatial attributes of Conv, FusedConv and the pooling kernels (kernel_shape,
// strides, dilations, pads, auto_pad, ceil_mode) resolved for one input
// shape, with the CPU provider's semantics (providers/cpu/nn/conv_attributes.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/op_kernel.h"

namespace onyx::cuda_ops {

struct SpatialAttributes {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel_shape;  // empty: taken from the weights (Conv)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begin..., end...
  bool ceil_mode = false;

  static SpatialAttributes FromInfo(const OpKernelInfo& info);
};

struct SpatialGeometry {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;
};

// Convolution geometry for `input_spatial` dims and `kernel`; errors name the
// attribute and the expected vs received size.
absl::StatusOr<SpatialGeometry> ResolveConvGeometry(const SpatialAttributes& attrs,
                                                    const std::vector<int64_t>& input_spatial,
                                                    const std::vector<int64_t>& kernel);

// Pooling geometry as ONNX Runtime resolves it: SAME_* pads sized for the
// undilated kernel, the count truncated toward zero (ceil_mode: rounded up,
// and a last window starting in the end padding dropped).
absl::StatusOr<SpatialGeometry> ResolvePoolGeometry(const SpatialAttributes& attrs,
                                                    const std::vector<int64_t>& input_spatial);

}  // namespace onyx::cuda_ops
