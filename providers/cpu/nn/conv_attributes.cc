#include "providers/cpu/nn/conv_attributes.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/status_macros.h"

namespace onyx {

ConvAttributes ConvAttributes::FromInfo(const OpKernelInfo& info) {
  ConvAttributes a;
  a.auto_pad = info.AttrOr<std::string>("auto_pad", "NOTSET");
  a.kernel_shape = info.AttrOr<std::vector<int64_t>>("kernel_shape", {});
  a.strides = info.AttrOr<std::vector<int64_t>>("strides", {});
  a.dilations = info.AttrOr<std::vector<int64_t>>("dilations", {});
  a.pads = info.AttrOr<std::vector<int64_t>>("pads", {});
  a.ceil_mode = info.AttrOr<int64_t>("ceil_mode", 0) != 0;
  return a;
}

absl::StatusOr<SpatialGeometry> ResolveGeometry(const ConvAttributes& attrs, const std::vector<int64_t>& input_spatial,
                                                const std::vector<int64_t>& kernel) {
  const size_t rank = input_spatial.size();
  SpatialGeometry g;
  g.in = input_spatial;
  g.kernel = kernel;
  auto check = [&](const std::vector<int64_t>& v, size_t expected, const char* name) -> absl::Status {
    if (v.size() != expected) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ",
                                                     expected, " for ", rank, " spatial dimensions"));
    }
    return absl::OkStatus();
  };
  if (kernel.size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("kernel has ", kernel.size(), " spatial dims, input has ", rank));
  }
  g.strides = attrs.strides.empty() ? std::vector<int64_t>(rank, 1) : attrs.strides;
  g.dilations = attrs.dilations.empty() ? std::vector<int64_t>(rank, 1) : attrs.dilations;
  if (auto s = check(g.strides, rank, "strides"); !s.ok()) return s;
  if (auto s = check(g.dilations, rank, "dilations"); !s.ok()) return s;
  std::vector<int64_t> pads = attrs.pads.empty() ? std::vector<int64_t>(2 * rank, 0) : attrs.pads;
  if (auto s = check(pads, 2 * rank, "pads"); !s.ok()) return s;
  g.pad_begin.assign(pads.begin(), pads.begin() + rank);
  g.pad_end.assign(pads.begin() + rank, pads.end());
  g.out.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (g.strides[i] <= 0 || g.dilations[i] <= 0 || kernel[i] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("strides, dilations and kernel must be positive (", "dimension ", i, ")"));
    }
    const int64_t effective = g.dilations[i] * (kernel[i] - 1) + 1;
    if (attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER") {
      const int64_t out = (g.in[i] + g.strides[i] - 1) / g.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * g.strides[i] + effective - g.in[i]);
      const int64_t small = total / 2;
      g.pad_begin[i] = attrs.auto_pad == "SAME_UPPER" ? small : total - small;
      g.pad_end[i] = total - g.pad_begin[i];
      g.out[i] = out;
      continue;
    }
    if (attrs.auto_pad == "VALID") {
      g.pad_begin[i] = g.pad_end[i] = 0;
    } else if (attrs.auto_pad != "NOTSET") {
      return absl::InvalidArgumentError(absl::StrCat("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or ",
                                                     "VALID, received '", attrs.auto_pad, "'"));
    }
    const int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - effective;
    if (span < 0) {
      return absl::InvalidArgumentError(absl::StrCat("kernel (", effective, " with dilation) exceeds padded input ",
                                                     g.in[i] + g.pad_begin[i] + g.pad_end[i], " in dimension ", i));
    }
    int64_t out = attrs.ceil_mode ? (span + g.strides[i] - 1) / g.strides[i] + 1 : span / g.strides[i] + 1;
    // With ceil_mode the last window must start inside the input or left padding.
    if (attrs.ceil_mode && (out - 1) * g.strides[i] >= g.in[i] + g.pad_begin[i]) --out;
    g.out[i] = out;
  }
  return g;
}

absl::StatusOr<SpatialGeometry> ResolvePoolGeometry(const ConvAttributes& attrs,
                                                    const std::vector<int64_t>& input_spatial) {
  const bool same = attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER";
  ConvAttributes explicit_pads = attrs;
  explicit_pads.auto_pad = same ? "NOTSET" : attrs.auto_pad;
  // Validates the attributes' sizes and values; its output sizes are replaced.
  ASSIGN_OR_RETURN(SpatialGeometry g, ResolveGeometry(explicit_pads, input_spatial,
                                                      std::vector<int64_t>(attrs.kernel_shape.size(), 1)));
  g.kernel = attrs.kernel_shape;
  for (size_t i = 0; i < g.in.size(); ++i) {
    const int64_t in = g.in[i], stride = g.strides[i], kernel = g.kernel[i];
    if (kernel <= 0)
      return absl::InvalidArgumentError(absl::StrCat("kernel_shape must be positive (dimension ", i, ")"));
    if (same) {
      const int64_t needed = ((in + stride - 1) / stride - 1) * stride + kernel - in;
      // A stride above the kernel may make `needed` negative: the end pad is
      // then negative too and the windows stop short of the last elements.
      g.pad_begin[i] = attrs.auto_pad == "SAME_UPPER" ? needed / 2 : (needed + 1) / 2;
      g.pad_end[i] = needed - g.pad_begin[i];
    }
    const int64_t span = in + g.pad_begin[i] + g.pad_end[i] - g.dilations[i] * (kernel - 1) - 1;
    int64_t out =
        attrs.ceil_mode ? static_cast<int64_t>(std::ceil(static_cast<float>(span) / stride + 1)) : span / stride + 1;
    if (attrs.ceil_mode && (out - 1) * stride >= in + g.pad_begin[i]) --out;
    if (out < 0) {
      return absl::InvalidArgumentError(absl::StrCat("the window (", kernel, " with dilation ", g.dilations[i],
                                                     ") exceeds the padded input ", in + g.pad_begin[i] + g.pad_end[i],
                                                     " in dimension ", i));
    }
    g.out[i] = out;
  }
  return g;
}

absl::StatusOr<ConvShape> ResolveConvShape(const ConvAttributes& attrs, int64_t group, absl::Span<const int64_t> x,
                                           absl::Span<const int64_t> w) {
  if (x.size() < 3 || w.size() != x.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("X ", DimsToString(x), " and W ", DimsToString(w), " must have the same rank >= 3"));
  }
  ConvShape s;
  s.batch = x[0];
  s.in_channels = x[1];
  s.out_channels = w[0];
  if (group <= 0 || s.in_channels % group != 0 || s.out_channels % group != 0 || w[1] * group != s.in_channels) {
    return absl::InvalidArgumentError(
        absl::StrCat("channels do not match: X has ", s.in_channels, ", W ", DimsToString(w), ", group ", group));
  }
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != kernel) {
    return absl::InvalidArgumentError("attribute 'kernel_shape' does not match the weights' spatial dims " +
                                      DimsToString(kernel));
  }
  auto g = ResolveGeometry(attrs, spatial, kernel);
  if (!g.ok()) return g.status();
  s.geometry = *std::move(g);
  s.out_dims = {s.batch, s.out_channels};
  for (int64_t o : s.geometry.out) s.out_dims.push_back(o);
  return s;
}

}  // namespace onyx
