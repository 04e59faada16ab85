// Resize-18 (antialias, axes, keep_aspect_ratio_policy) and Resize-19
// (coordinate_transformation_mode half_pixel_symmetric).
#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

namespace onyx::schemas {
namespace {

// Output dims from constant sizes or scales over the named axes (all when
// `axes` is absent); the others keep their input dim. With neither known
// before run time, only the rank.
void InferResize18(onnx::InferenceContext& ctx) {
  onnx::TensorShapeProto* out = SameRankOutputShape(ctx);
  if (out == nullptr) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int rank = in.dim_size();
  std::vector<int64_t> axes;
  onnx::getRepeatedAttribute(ctx, "axes", axes);
  const bool all_axes = axes.empty();
  if (all_axes) {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::vector<bool> named(rank, false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) fail_shape_inference("axes entry ", a, " is out of range for rank ", rank);
    if (a < 0) a += rank;
    if (named[a]) fail_shape_inference("axes names axis ", a, " more than once");
    named[a] = true;
  }
  for (int i = 0; i < rank; ++i) {
    if (!named[i]) *out->mutable_dim(i) = in.dim(i);
  }
  const onnx::TensorProto* sizes = ctx.getNumInputs() > 3 ? ctx.getInputData(3) : nullptr;
  const onnx::TensorProto* scales = ctx.getNumInputs() > 2 ? ctx.getInputData(2) : nullptr;
  if (sizes != nullptr && sizes->dims_size() == 1 && sizes->dims(0) > 0) {
    std::vector<int64_t> sz = onnx::ParseData<int64_t>(sizes);
    if (sz.size() != axes.size()) fail_shape_inference("sizes has ", sz.size(), " entries, expected ", axes.size());
    const std::string policy = onnx::getAttribute(ctx, "keep_aspect_ratio_policy", std::string("stretch"));
    if (policy == "not_larger" || policy == "not_smaller") {
      // One factor for all named axes; needs every named input dim.
      float factor = policy == "not_larger" ? std::numeric_limits<float>::max() : std::numeric_limits<float>::min();
      for (size_t i = 0; i < axes.size(); ++i) {
        const auto& d = in.dim(static_cast<int>(axes[i]));
        if (!d.has_dim_value()) return;
        const float r = d.dim_value() == 0 ? 1.0f : static_cast<float>(sz[i]) / static_cast<float>(d.dim_value());
        factor = policy == "not_larger" ? std::min(factor, r) : std::max(factor, r);
      }
      for (int64_t a : axes) {
        const float size = std::round(factor * static_cast<float>(in.dim(static_cast<int>(a)).dim_value()));
        out->mutable_dim(static_cast<int>(a))->set_dim_value(static_cast<int64_t>(size));
      }
      return;
    }
    for (size_t i = 0; i < axes.size(); ++i) out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value(sz[i]);
  } else if (scales != nullptr && scales->dims_size() == 1 && scales->dims(0) > 0) {
    std::vector<float> sc = onnx::ParseData<float>(scales);
    if (sc.size() != axes.size()) fail_shape_inference("scales has ", sc.size(), " entries, expected ", axes.size());
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto& d = in.dim(static_cast<int>(axes[i]));
      if (!d.has_dim_value()) continue;
      const double size = std::floor(static_cast<double>(d.dim_value()) * sc[i]);
      out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value(static_cast<int64_t>(size));
    }
  }
}

onnx::OpSchema Resize(int version) {
  onnx::OpSchema s("Resize", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("mode", "nearest, linear or cubic.", onnx::AttributeProto::STRING, std::string("nearest"))
      .Attr("coordinate_transformation_mode",
            version >= 19 ? "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
                            "tf_crop_and_resize."
                          : "half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize.",
            onnx::AttributeProto::STRING, std::string("half_pixel"))
      .Attr("nearest_mode", "round_prefer_floor, round_prefer_ceil, floor or ceil.", onnx::AttributeProto::STRING,
            std::string("round_prefer_floor"))
      .Attr("cubic_coeff_a", "Coefficient a of cubic interpolation.", onnx::AttributeProto::FLOAT, -0.75f)
      .Attr("exclude_outside", "1: weights of taps outside the input are zero and the rest renormalised.",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("extrapolation_value", "Value of outputs outside the input in tf_crop_and_resize.",
            onnx::AttributeProto::FLOAT, 0.0f)
      .Attr("antialias", "1: linear and cubic stretch their filter by 1 / scale when downscaling.",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("axes", "Axes that roi, scales and sizes refer to (default all).", onnx::AttributeProto::INTS,
            /*required=*/false)
      .Attr("keep_aspect_ratio_policy", "stretch, not_larger or not_smaller: how sizes keep the aspect ratio.",
            onnx::AttributeProto::STRING, std::string("stretch"))
      .Input(0, "X", "Input tensor.", "T1")
      .Input(1, "roi", "Region of interest (tf_crop_and_resize): starts then ends, normalised.", "T2",
             onnx::OpSchema::Optional)
      .Input(2, "scales", "Scale per axis.", "tensor(float)", onnx::OpSchema::Optional)
      .Input(3, "sizes", "Output size per axis.", "tensor(int64)", onnx::OpSchema::Optional)
      .Output(0, "Y", "Resized tensor.", "T1")
      .TypeConstraint("T1", onnx::OpSchema::all_tensor_types_with_bfloat(), "Any tensor type.")
      .TypeConstraint("T2", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "roi types.")
      .TypeAndShapeInferenceFunction(InferResize18);
  return s;
}

}  // namespace

void RegisterResizeSchemas() {
  Register(Resize(18));
  Register(Resize(19));
}

}  // namespace onyx::schemas
