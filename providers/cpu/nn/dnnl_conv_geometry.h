// How a resolved convolution (ConvShape) is described to oneDNN: the plain
// layouts of ONNX's activations and weights, and the weights' dims, strides,
// dilations (oneDNN counts the gaps) and pads. Shared by the float and int8
// convolutions.
#pragma once

#include <cstdint>

#include "oneapi/dnnl/dnnl.hpp"
#include "providers/cpu/nn/conv_attributes.h"

namespace onyx {

// Row-major [N, C, d...] for 1 to 3 spatial dims (undef otherwise).
inline dnnl::memory::format_tag DnnlPlainActivationTag(size_t rank) {
  switch (rank) {
    case 3: return dnnl::memory::format_tag::ncw;
    case 4: return dnnl::memory::format_tag::nchw;
    case 5: return dnnl::memory::format_tag::ncdhw;
  }
  return dnnl::memory::format_tag::undef;
}

// ONNX's [M, C/group, k...], seen as [group, M/group, C/group, k...] when grouped.
inline dnnl::memory::format_tag DnnlPlainWeightsTag(size_t rank, bool grouped) {
  switch (rank) {
    case 3: return grouped ? dnnl::memory::format_tag::goiw : dnnl::memory::format_tag::oiw;
    case 4: return grouped ? dnnl::memory::format_tag::goihw : dnnl::memory::format_tag::oihw;
    case 5: return grouped ? dnnl::memory::format_tag::goidhw : dnnl::memory::format_tag::oidhw;
  }
  return dnnl::memory::format_tag::undef;
}

struct DnnlConvGeometry {
  dnnl::memory::dims weights, strides, dilations, pad_l, pad_r;
};

inline DnnlConvGeometry DnnlGeometryOf(const ConvShape& s, int64_t group) {
  DnnlConvGeometry g;
  if (group > 1) {
    g.weights = {group, s.out_channels / group, s.in_channels / group};
  } else {
    g.weights = {s.out_channels, s.in_channels};
  }
  for (int64_t k : s.geometry.kernel) g.weights.push_back(k);
  for (size_t i = 0; i < s.geometry.in.size(); ++i) {
    g.strides.push_back(s.geometry.strides[i]);
    g.dilations.push_back(s.geometry.dilations[i] - 1);
    g.pad_l.push_back(s.geometry.pad_begin[i]);
    g.pad_r.push_back(s.geometry.pad_end[i]);
  }
  return g;
}

}  // namespace onyx
