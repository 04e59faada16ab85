// Resize (opset 10 on) and Upsample (7-9), modes nearest and linear
// (bilinear, trilinear), with the coordinate transformation modes
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners,
// asymmetric and tf_half_pixel_for_nn, and every nearest_mode. Scales and
// sizes must be constant initializers; the output shape follows from them
// and the input's shape at run time. Cubic, tf_crop_and_resize, antialias
// and keep_aspect_ratio_policy other than stretch are declined.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

bool Legacy(const Node& n) { return n.op_type == "Upsample" || n.since_version < 11; }

// The scales and sizes inputs of this version (-1: none).
void InputSlots(const Node& n, int* scales, int* sizes) {
  *scales = *sizes = -1;
  if (n.op_type == "Upsample" && n.since_version < 9) return;
  if (Legacy(n)) {
    *scales = 1;
    return;
  }
  *scales = 2;
  *sizes = 3;
}

class Resize final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckResizeNode(info));
    const Node& n = info.node();
    auto k = std::unique_ptr<Resize>(new Resize());
    const std::string mode = info.AttrOr<std::string>("mode", "nearest");
    k->linear_ = mode != "nearest";
    if (Legacy(n)) {
      k->coord_ = ResizeCoordMode::kAsymmetric;
      k->nearest_ = ResizeNearestMode::kSimple;
    } else {
      const std::string coord = info.AttrOr<std::string>("coordinate_transformation_mode", "half_pixel");
      const std::pair<const char*, ResizeCoordMode> coords[] = {
          {"half_pixel", ResizeCoordMode::kHalfPixel},
          {"half_pixel_symmetric", ResizeCoordMode::kHalfPixelSymmetric},
          {"pytorch_half_pixel", ResizeCoordMode::kPytorchHalfPixel},
          {"align_corners", ResizeCoordMode::kAlignCorners},
          {"asymmetric", ResizeCoordMode::kAsymmetric},
          {"tf_half_pixel_for_nn", ResizeCoordMode::kTfHalfPixelForNn}};
      for (const auto& [name, value] : coords) {
        if (coord == name) k->coord_ = value;
      }
      const std::string rounding = info.AttrOr<std::string>("nearest_mode", "round_prefer_floor");
      const std::pair<const char*, ResizeNearestMode> roundings[] = {
          {"round_prefer_floor", ResizeNearestMode::kRoundPreferFloor},
          {"round_prefer_ceil", ResizeNearestMode::kRoundPreferCeil},
          {"floor", ResizeNearestMode::kFloor},
          {"ceil", ResizeNearestMode::kCeil}};
      for (const auto& [name, value] : roundings) {
        if (rounding == name) k->nearest_ = value;
      }
      k->axes_ = info.AttrOr<std::vector<int64_t>>("axes", {});
    }
    int scales_slot, sizes_slot;
    InputSlots(n, &scales_slot, &sizes_slot);
    if (scales_slot < 0) {
      k->scales_ = info.AttrOr<std::vector<float>>("scales", {});
    } else if (const Tensor* t = info.ConstantInput(scales_slot)) {
      ASSIGN_OR_RETURN(k->scales_, ReadFloats(info, *t, "scales"));
    }
    if (sizes_slot >= 0) {
      if (const Tensor* t = info.ConstantInput(sizes_slot)) {
        ASSIGN_OR_RETURN(k->sizes_, ReadInt64s(info, *t, "sizes"));
      }
    }
    if (k->scales_.empty() && k->sizes_.empty()) return info.Error("needs scales or sizes");
    RETURN_IF_ERROR(k->UploadConstantInputs(info, {1, 2, 3}));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    const int64_t rank = x->rank();
    if (rank < 1 || rank > kMaxRank) {
      return ctx.Error(absl::StrCat("resizes inputs of rank 1 to ", kMaxRank, " on CUDA, received ", rank));
    }
    if (linear_ && x->type() != DataType::kFloat && x->type() != DataType::kFloat16) {
      return ctx.Error(
          absl::StrCat("linear mode computes float and float16 on CUDA, received ", DataTypeName(x->type())));
    }
    std::vector<int64_t> axes = axes_;
    if (axes.empty()) {
      for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    }
    for (int64_t& a : axes) {
      if (!NormalizeAxis(a, rank)) return ctx.Error(absl::StrCat("axes entry is out of range for rank ", rank));
    }
    ResizeArgs args;
    args.rank = static_cast<int32_t>(rank);
    args.linear = linear_;
    args.coord = coord_;
    args.nearest = nearest_;
    for (int64_t a = 0; a < rank; ++a) {
      args.in_dims[a] = args.out_dims[a] = x->dims()[a];
      args.scales[a] = 1.0;
    }
    const bool by_sizes = !sizes_.empty();
    const size_t given = by_sizes ? sizes_.size() : scales_.size();
    if (given != axes.size()) {
      return ctx.Error(absl::StrCat(by_sizes ? "sizes" : "scales", " has ", given, " entries, expected ", axes.size()));
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i], in = x->dims()[a];
      if (by_sizes) {
        if (sizes_[i] < 0) return ctx.Error(absl::StrCat("sizes[", i, "] = ", sizes_[i], " is negative"));
        args.out_dims[a] = sizes_[i];
        args.scales[a] = in == 0 ? 1.0 : static_cast<double>(sizes_[i]) / static_cast<double>(in);
      } else {
        if (!(scales_[i] > 0)) return ctx.Error(absl::StrCat("scales[", i, "] = ", scales_[i], " must be positive"));
        args.out_dims[a] = static_cast<int64_t>(std::floor(static_cast<double>(in) * scales_[i]));
        args.scales[a] = scales_[i];
      }
    }
    Dims out_dims(args.out_dims, args.out_dims + rank);
    args.n = NumElements(out_dims);
    RETURN_IF_ERROR(CheckIndexable(ctx, args.n, "the output"));
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x->type()));
    if (args.n == 0) return absl::OkStatus();
    if (x->num_elements() == 0) return ctx.Error("cannot resize an empty input to a non-empty output");
    if (linear_) {
      int interpolated = 0;
      for (int a = 0; a < rank; ++a) interpolated += !ResizeAxisIsIdentity(args, a);
      if (interpolated > 3) {
        return ctx.Error(
            absl::StrCat("linear mode interpolates at most 3 axes on CUDA, this resize changes ", interpolated));
      }
    }
    return CheckLaunch(ctx, LaunchResize(x->type(), args, x->raw(), y->mutable_raw(), CurrentCudaLane().stream));
  }

 private:
  Resize() = default;
  bool linear_ = false;
  ResizeCoordMode coord_ = ResizeCoordMode::kHalfPixel;
  ResizeNearestMode nearest_ = ResizeNearestMode::kRoundPreferFloor;
  std::vector<int64_t> axes_;   // Resize-18; empty: every axis
  std::vector<float> scales_;   // empty when sizes are given
  std::vector<int64_t> sizes_;  // wins over scales
};

}  // namespace

absl::Status CheckResizeNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (!n.domain.empty() || (n.op_type != "Resize" && n.op_type != "Upsample")) return absl::OkStatus();
  const std::string mode = info.AttrOr<std::string>("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "trilinear") {
    return info.Error(absl::StrCat("mode '", mode, "' is not supported on CUDA (nearest, linear)"));
  }
  if (!Legacy(n)) {
    const std::string coord = info.AttrOr<std::string>("coordinate_transformation_mode", "half_pixel");
    if (coord == "tf_crop_and_resize" ||
        (coord != "half_pixel" && coord != "half_pixel_symmetric" && coord != "pytorch_half_pixel" &&
         coord != "align_corners" && coord != "asymmetric" && coord != "tf_half_pixel_for_nn")) {
      return info.Error(absl::StrCat("coordinate_transformation_mode '", coord, "' is not supported on CUDA"));
    }
    const std::string rounding = info.AttrOr<std::string>("nearest_mode", "round_prefer_floor");
    if (rounding != "round_prefer_floor" && rounding != "round_prefer_ceil" && rounding != "floor" &&
        rounding != "ceil") {
      return info.Error(absl::StrCat("nearest_mode '", rounding, "' is not supported"));
    }
    if (mode != "nearest" && info.AttrOr<int64_t>("antialias", 0) != 0) {
      return info.Error("antialias is not supported on CUDA");
    }
    const std::string policy = info.AttrOr<std::string>("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") {
      return info.Error(absl::StrCat("keep_aspect_ratio_policy '", policy, "' is not supported on CUDA"));
    }
  }
  int scales_slot, sizes_slot;
  InputSlots(n, &scales_slot, &sizes_slot);
  if (scales_slot >= 0) RETURN_IF_ERROR(RequireConstantInput(info, scales_slot, "scales"));
  if (sizes_slot >= 0) RETURN_IF_ERROR(RequireConstantInput(info, sizes_slot, "sizes"));
  return absl::OkStatus();
}

void RegisterResizeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Resize").Since(10).Types("T1", kCudaCopyTypes).Build(), Resize::Create);
  r.Register(KernelDefBuilder("Upsample").Since(7, 9).Types("T", kCudaCopyTypes).Build(), Resize::Create);
}

}  // namespace onyx::cuda_ops
