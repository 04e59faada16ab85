#include "providers/cuda/kernels/spatial.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace onyx::cuda_ops {
namespace {

absl::Status CheckSize(const std::vector<int64_t>& v, size_t expected, const char* name, size_t rank) {
  if (v.size() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ",
                                                 expected, " for ", rank, " spatial dimensions"));
}

// Fills strides, dilations and explicit pads with defaults and checks sizes.
absl::StatusOr<SpatialGeometry> Defaults(const SpatialAttributes& attrs, const std::vector<int64_t>& input_spatial) {
  const size_t rank = input_spatial.size();
  SpatialGeometry g;
  g.in = input_spatial;
  g.strides = attrs.strides.empty() ? std::vector<int64_t>(rank, 1) : attrs.strides;
  g.dilations = attrs.dilations.empty() ? std::vector<int64_t>(rank, 1) : attrs.dilations;
  const std::vector<int64_t> pads = attrs.pads.empty() ? std::vector<int64_t>(2 * rank, 0) : attrs.pads;
  if (auto s = CheckSize(g.strides, rank, "strides", rank); !s.ok()) return s;
  if (auto s = CheckSize(g.dilations, rank, "dilations", rank); !s.ok()) return s;
  if (auto s = CheckSize(pads, 2 * rank, "pads", rank); !s.ok()) return s;
  g.pad_begin.assign(pads.begin(), pads.begin() + rank);
  g.pad_end.assign(pads.begin() + rank, pads.end());
  for (size_t i = 0; i < rank; ++i) {
    if (g.strides[i] <= 0 || g.dilations[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("strides and dilations must be positive (dimension ", i, ")"));
    }
  }
  if (attrs.auto_pad != "NOTSET" && attrs.auto_pad != "VALID" && attrs.auto_pad != "SAME_UPPER" &&
      attrs.auto_pad != "SAME_LOWER") {
    return absl::InvalidArgumentError(
        absl::StrCat("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, received '", attrs.auto_pad, "'"));
  }
  g.out.resize(rank);
  return g;
}

}  // namespace

SpatialAttributes SpatialAttributes::FromInfo(const OpKernelInfo& info) {
  SpatialAttributes a;
  a.auto_pad = info.AttrOr<std::string>("auto_pad", "NOTSET");
  a.kernel_shape = info.AttrOr<std::vector<int64_t>>("kernel_shape", {});
  a.strides = info.AttrOr<std::vector<int64_t>>("strides", {});
  a.dilations = info.AttrOr<std::vector<int64_t>>("dilations", {});
  a.pads = info.AttrOr<std::vector<int64_t>>("pads", {});
  a.ceil_mode = info.AttrOr<int64_t>("ceil_mode", 0) != 0;
  return a;
}

absl::StatusOr<SpatialGeometry> ResolveConvGeometry(const SpatialAttributes& attrs,
                                                    const std::vector<int64_t>& input_spatial,
                                                    const std::vector<int64_t>& kernel) {
  auto defaults = Defaults(attrs, input_spatial);
  if (!defaults.ok()) return defaults.status();
  SpatialGeometry g = *std::move(defaults);
  g.kernel = kernel;
  if (kernel.size() != g.in.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel has ", kernel.size(), " spatial dims, input has ", g.in.size()));
  }
  for (size_t i = 0; i < g.in.size(); ++i) {
    if (kernel[i] <= 0) return absl::InvalidArgumentError(absl::StrCat("kernel dim ", i, " is not positive"));
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
    if (attrs.auto_pad == "VALID") g.pad_begin[i] = g.pad_end[i] = 0;
    if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("pads must not be negative (dimension ", i, ")"));
    }
    const int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - effective;
    if (span < 0) {
      return absl::InvalidArgumentError(absl::StrCat("kernel (", effective, " with dilation) exceeds padded input ",
                                                     g.in[i] + g.pad_begin[i] + g.pad_end[i], " in dimension ", i));
    }
    g.out[i] = span / g.strides[i] + 1;
  }
  return g;
}

absl::StatusOr<SpatialGeometry> ResolvePoolGeometry(const SpatialAttributes& attrs,
                                                    const std::vector<int64_t>& input_spatial) {
  auto defaults = Defaults(attrs, input_spatial);
  if (!defaults.ok()) return defaults.status();
  SpatialGeometry g = *std::move(defaults);
  g.kernel = attrs.kernel_shape;
  if (g.kernel.size() != g.in.size()) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'kernel_shape' has ", g.kernel.size(),
                                                   " values, the input has ", g.in.size(), " spatial dimensions"));
  }
  const bool same = attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER";
  for (size_t i = 0; i < g.in.size(); ++i) {
    const int64_t in = g.in[i], stride = g.strides[i], kernel = g.kernel[i];
    if (kernel <= 0)
      return absl::InvalidArgumentError(absl::StrCat("kernel_shape must be positive (dimension ", i, ")"));
    if (attrs.auto_pad == "VALID") g.pad_begin[i] = g.pad_end[i] = 0;
    if (same) {
      const int64_t needed = ((in + stride - 1) / stride - 1) * stride + kernel - in;
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

}  // namespace onyx::cuda_ops
