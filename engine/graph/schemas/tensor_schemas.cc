// Tensor-family schemas of opsets 18-23: Split-18 (num_outputs), Pad-18
// (axes input), Pad-19 (wrap mode) and ScatterElements/ScatterND-18 (max and
// min reductions), Cast/CastLike-19 (saturate) and the new CenterCropPad-18 and
// Col2Im-18, and Equal-19 (strings). Resize-18/19 live in resize_schemas.cc.
#include <numeric>
#include <string>

#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

namespace onyx::schemas {
namespace {

// The values of a constant int32 or int64 tensor, as int64.
std::vector<int64_t> ParseIndices(const onnx::TensorProto* data) {
  if (data->data_type() != onnx::TensorProto::INT32) return onnx::ParseData<int64_t>(data);
  const std::vector<int32_t> v = onnx::ParseData<int32_t>(data);
  return std::vector<int64_t>(v.begin(), v.end());
}

// Split-18: the sizes come from the `split` input or, new at 18, from
// `num_outputs` (equal chunks of ceil(dim / n), the last one smaller); giving
// both or neither is an error, as in ONNX's own inference.
void InferSplit18(onnx::InferenceContext& ctx) {
  const size_t n_out = ctx.getNumOutputs();
  for (size_t i = 0; i < n_out; ++i) onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  const bool has_split = ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr;
  const onnx::AttributeProto* num_outputs = ctx.getAttribute("num_outputs");
  if (has_split && num_outputs != nullptr) {
    fail_shape_inference("Both 'split' input and 'num_outputs' attribute were given");
  }
  if (!has_split && num_outputs == nullptr) {
    fail_shape_inference("Neither 'split' input nor 'num_outputs' attribute has been given");
  }
  if (num_outputs != nullptr && num_outputs->i() < 1) {
    fail_shape_inference("Attribute 'num_outputs' value ", num_outputs->i(), " cannot be lower than 1");
  }
  if (num_outputs != nullptr && static_cast<size_t>(num_outputs->i()) != n_out) {
    fail_shape_inference("Attribute 'num_outputs' (", num_outputs->i(), ") does not match the ", n_out, " outputs");
  }
  if (!onnx::hasNInputShapes(ctx, 1)) return;
  const auto& shape = ctx.getInputType(0)->tensor_type().shape();
  const int rank = shape.dim_size();
  int64_t axis = onnx::getAttribute(ctx, "axis", 0);
  if (axis < -rank || axis >= rank) {
    fail_shape_inference("Invalid value of attribute 'axis'. Rank=", rank, " Value=", axis);
  }
  if (axis < 0) axis += rank;
  auto set_outputs = [&](const std::vector<int64_t>* sizes) {
    for (size_t i = 0; i < n_out; ++i) {
      auto* out = ctx.getOutputType(i)->mutable_tensor_type()->mutable_shape();
      *out = shape;
      out->mutable_dim(static_cast<int>(axis))->Clear();
      if (sizes != nullptr) out->mutable_dim(static_cast<int>(axis))->set_dim_value((*sizes)[i]);
    }
  };
  const auto& split_dim = shape.dim(static_cast<int>(axis));
  if (!split_dim.has_dim_value()) return set_outputs(nullptr);
  const int64_t extent = split_dim.dim_value();
  std::vector<int64_t> split;
  if (has_split) {
    const onnx::TensorProto* data = ctx.getInputData(1);
    if (data == nullptr) return set_outputs(nullptr);
    split = onnx::ParseData<int64_t>(data);
    if (split.empty()) {  // as if omitted: equal parts, one per output
      if (extent % static_cast<int64_t>(n_out) != 0) {
        fail_shape_inference("Dimension ", extent, " of axis ", axis, " cannot be split evenly into ", n_out,
                             " outputs");
      }
      split.assign(n_out, extent / static_cast<int64_t>(n_out));
    }
    if (split.size() != n_out) {
      fail_shape_inference("Mismatch between number of splits (", split.size(), ") and outputs (", n_out, ")");
    }
    if (std::accumulate(split.begin(), split.end(), int64_t{0}) != extent) {
      fail_shape_inference("Mismatch between the sum of 'split' and the split dimension of the input (", extent, ")");
    }
  } else {
    const int64_t n = num_outputs->i();
    const int64_t chunk = (extent + n - 1) / n;
    const int64_t last = extent - chunk * (n - 1);
    if (last <= 0) {
      fail_shape_inference("Dimension ", extent, " of axis ", axis, " cannot be split into ", n, " chunks of ceil(",
                           extent, "/", n, ") = ", chunk);
    }
    split.assign(n - 1, chunk);
    split.push_back(last);
  }
  set_outputs(&split);
}

onnx::OpSchema Split18() {
  onnx::OpSchema s("Split", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(18)
      .Attr("axis", "Axis to split on; negative counts from the back.", onnx::AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("num_outputs", "Number of equal parts (the last smaller when the axis does not divide).",
            onnx::AttributeProto::INT, /*required=*/false)
      .Input(0, "input", "The tensor to split.", "T")
      .Input(1, "split", "Length of each output along the axis.", "tensor(int64)", onnx::OpSchema::Optional)
      .Output(0, "outputs", "The parts.", "T", onnx::OpSchema::Variadic, true, 1)
      .TypeConstraint("T", onnx::OpSchema::all_tensor_types_with_bfloat(), "Any tensor type.")
      .TypeAndShapeInferenceFunction(InferSplit18);
  return s;
}

// Pad-18/19: output dims from the input dims and constant pads (and axes);
// rank only when they are computed at run time.
void InferPad(onnx::InferenceContext& ctx) {
  onnx::TensorShapeProto* out = SameRankOutputShape(ctx);
  if (out == nullptr) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int rank = in.dim_size();
  const onnx::TensorProto* pads_data = ctx.getInputData(1);
  if (pads_data == nullptr) return;
  std::vector<int64_t> axes;
  const bool has_axes = ctx.getNumInputs() > 3 && ctx.getInputType(3) != nullptr;
  if (has_axes) {
    const onnx::TensorProto* axes_data = ctx.getInputData(3);
    if (axes_data == nullptr) return;
    axes = ParseIndices(axes_data);
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  const std::vector<int64_t> pads = onnx::ParseData<int64_t>(pads_data);
  const size_t n = axes.size();
  if (pads.size() != 2 * n) fail_shape_inference("pads has ", pads.size(), " entries, expected ", 2 * n);
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank) fail_shape_inference("axis ", a, " is out of range for rank ", rank);
    if (a < 0) a += rank;
    if (seen[a]) fail_shape_inference("Axis ", a, " is referred to more than once.");
    seen[a] = true;
    begin[a] = pads[i];
    end[a] = pads[i + n];
  }
  for (int i = 0; i < rank; ++i) {
    const auto& d = in.dim(i);
    if (d.has_dim_value()) {
      out->mutable_dim(i)->set_dim_value(d.dim_value() + begin[i] + end[i]);
    } else if (begin[i] == 0 && end[i] == 0) {
      *out->mutable_dim(i) = d;
    }
  }
}

onnx::OpSchema Pad(int version) {
  onnx::OpSchema s("Pad", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("mode", version >= 19 ? "constant, reflect, edge or wrap." : "constant, reflect or edge.",
            onnx::AttributeProto::STRING, std::string("constant"))
      .Input(0, "data", "Input tensor.", "T")
      .Input(1, "pads", "Begins then ends of the padded axes (int64); negative values crop.", "tensor(int64)")
      .Input(2, "constant_value", "Scalar fill of constant mode (default 0).", "T", onnx::OpSchema::Optional)
      .Input(3, "axes", "Axes that pads applies to (default all); negative counts from the back.", "Tind",
             onnx::OpSchema::Optional)
      .Output(0, "output", "Padded tensor.", "T")
      .TypeConstraint("T", onnx::OpSchema::all_tensor_types_with_bfloat(), "Any tensor type.")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "Axes index types.")
      .TypeAndShapeInferenceFunction(InferPad);
  return s;
}

// ScatterElements-18 / ScatterND-18: reduction gains max and min; the output
// is data's type and shape.
onnx::OpSchema Scatter18(const char* name) {
  const bool elements = std::string(name) == "ScatterElements";
  onnx::OpSchema s(name, __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(18)
      .Attr("reduction", "none, add, mul, max or min: how updates combine with data and each other.",
            onnx::AttributeProto::STRING, std::string("none"))
      .Input(0, "data", "Tensor to scatter into.", "T")
      .Input(1, "indices", elements ? "Indices along axis, shaped like updates." : "Index tuples (last axis).",
             elements ? "Tind" : "tensor(int64)")
      .Input(2, "updates", "Values to scatter.", "T")
      .Output(0, "output", "data with the updates applied.", "T")
      .TypeConstraint("T", onnx::OpSchema::all_tensor_types_with_bfloat(), "Any tensor type.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (onnx::hasNInputShapes(ctx, 1)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  if (elements) {
    s.Attr("axis", "Axis the indices refer to; negative counts from the back.", onnx::AttributeProto::INT,
           static_cast<int64_t>(0))
        .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "Index types.");
  }
  return s;
}

// Cast-19 / CastLike-19: the float8 types and `saturate`. onnx 1.12 cannot
// name float8 in a type constraint, so the lists stay those of Cast-13 and
// the kernels refuse float8 with a clear message (as they do the int4 and
// float4 types of Cast-21/23, whose schemas are not registered: those
// versions change nothing else).
std::vector<std::string> CastTypes() {
  std::vector<std::string> t = NumericTypes();
  t.push_back("tensor(bool)");
  t.push_back("tensor(string)");
  return t;
}

onnx::OpSchema Cast19(bool like) {
  onnx::OpSchema s(like ? "CastLike" : "Cast", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(19)
      .Attr("saturate", "float8 targets only: 1 clamps out-of-range values to the largest finite value.",
            onnx::AttributeProto::INT, static_cast<int64_t>(1))
      .Input(0, "input", "Tensor to cast.", "T1")
      .TypeConstraint("T1", CastTypes(), "Source types.")
      .TypeConstraint("T2", CastTypes(), "Target types.");
  if (like) {
    s.Input(1, "target_type", "Its element type is the target type.", "T2")
        .Output(0, "output", "input converted to target_type's element type.", "T2")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
          onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
          if (onnx::hasNInputShapes(ctx, 1)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
        });
  } else {
    s.Attr("to", "Target element type (a TensorProto.DataType value).", onnx::AttributeProto::INT)
        .Output(0, "output", "input converted to 'to'.", "T2")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
          onnx::propagateElemTypeFromAttributeToOutput(ctx, "to", 0);
          if (onnx::hasNInputShapes(ctx, 1)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
        });
  }
  return s;
}

// CenterCropPad-18: the named axes (all by default) take the lengths of
// `shape`, cropped or zero-padded around their centre.
void InferCenterCropPad(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 1)) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int rank = in.dim_size();
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  *out = in;
  std::vector<int64_t> axes;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes)) {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  const onnx::TensorProto* shape = ctx.getInputData(1);
  std::vector<int64_t> lengths;
  if (shape != nullptr) lengths = ParseIndices(shape);
  if (shape != nullptr && lengths.size() != axes.size()) {
    fail_shape_inference("shape has ", lengths.size(), " entries, expected ", axes.size());
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank) fail_shape_inference("axes entry ", a, " is out of range for rank ", rank);
    if (a < 0) a += rank;
    out->mutable_dim(static_cast<int>(a))->Clear();
    if (shape != nullptr) out->mutable_dim(static_cast<int>(a))->set_dim_value(lengths[i]);
  }
}

onnx::OpSchema CenterCropPad18() {
  onnx::OpSchema s("CenterCropPad", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(18)
      .Attr("axes", "Axes that shape refers to (default all); negative counts from the back.",
            onnx::AttributeProto::INTS, /*required=*/false)
      .Input(0, "input_data", "Input tensor.", "T")
      .Input(1, "shape", "Output length of each named axis.", "Tind")
      .Output(0, "output_data", "Cropped or padded tensor.", "T")
      .TypeConstraint("T", onnx::OpSchema::all_tensor_types_with_bfloat(), "Any tensor type.")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "Length types.")
      .TypeAndShapeInferenceFunction(InferCenterCropPad);
  return s;
}

// Col2Im-18: [N, C * prod(block_shape), L] -> [N, C, image_shape...].
void InferCol2Im(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const onnx::TensorProto* image = ctx.getInputData(1);
  const onnx::TensorProto* block = ctx.getInputData(2);
  if (image == nullptr) return;
  const std::vector<int64_t> image_dims = onnx::ParseData<int64_t>(image);
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  out->clear_dim();
  auto* n = out->add_dim();
  auto* c = out->add_dim();
  for (int64_t d : image_dims) out->add_dim()->set_dim_value(d);
  if (!onnx::hasNInputShapes(ctx, 1)) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  if (in.dim_size() != 3) fail_shape_inference("input must have rank 3, has ", in.dim_size());
  *n = in.dim(0);
  if (block == nullptr || !in.dim(1).has_dim_value()) return;
  int64_t block_size = 1;
  for (int64_t b : onnx::ParseData<int64_t>(block)) block_size *= b;
  if (block_size > 0) c->set_dim_value(in.dim(1).dim_value() / block_size);
}

onnx::OpSchema Col2Im18() {
  onnx::OpSchema s("Col2Im", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(18)
      .Attr("dilations", "Dilation per spatial axis (default 1).", onnx::AttributeProto::INTS, /*required=*/false)
      .Attr("pads", "Padding per spatial axis, begins then ends (default 0).", onnx::AttributeProto::INTS,
            /*required=*/false)
      .Attr("strides", "Stride per spatial axis (default 1).", onnx::AttributeProto::INTS, /*required=*/false)
      .Input(0, "input", "Columns [N, C * prod(block_shape), L].", "T")
      .Input(1, "image_shape", "Spatial dims of the image.", "tensor(int64)")
      .Input(2, "block_shape", "Spatial dims of a block.", "tensor(int64)")
      .Output(0, "output", "Image [N, C, image_shape...].", "T")
      .TypeConstraint("T", onnx::OpSchema::all_tensor_types_with_bfloat(), "Any tensor type.")
      .TypeAndShapeInferenceFunction(InferCol2Im);
  return s;
}

// Equal-19: strings compare too.
onnx::OpSchema Equal19() {
  std::vector<std::string> types = NumericTypes();
  types.push_back("tensor(bool)");
  types.push_back("tensor(string)");
  onnx::OpSchema s("Equal", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(19)
      .Input(0, "A", "First operand.", "T")
      .Input(1, "B", "Second operand (broadcast with A).", "T")
      .Output(0, "C", "A == B element-wise.", "T1")
      .TypeConstraint("T", std::move(types), "Comparable types.")
      .TypeConstraint("T1", {"tensor(bool)"}, "Result type.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
        if (onnx::hasNInputShapes(ctx, 2)) {
          onnx::bidirectionalBroadcastShapeInference(ctx.getInputType(0)->tensor_type().shape(),
                                                     ctx.getInputType(1)->tensor_type().shape(),
                                                     *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
        }
      });
  return s;
}

}  // namespace

void RegisterTensorSchemas() {
  Register(Split18());
  Register(Pad(18));
  Register(Pad(19));
  RegisterResizeSchemas();
  Register(Scatter18("ScatterElements"));
  Register(Scatter18("ScatterND"));
  Register(Cast19(false));
  Register(Cast19(true));
  Register(CenterCropPad18());
  Register(Col2Im18());
  Register(Equal19());
}

}  // namespace onyx::schemas
