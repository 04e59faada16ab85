// Quantized contrib schemas (com.microsoft): MatMulIntegerToFloat,
// DynamicQuantizeMatMul, QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool and
// QLinearAveragePool.
#include <cmath>

#include "graph/schemas/contrib_schemas.h"
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

using Dim = onnx::TensorShapeProto::Dimension;

const std::vector<std::string>& Int8Types() {
  static const std::vector<std::string> t = {"tensor(uint8)", "tensor(int8)"};
  return t;
}

// MatMul's shape; the element type of the output from input `type_input`.
void InferQuantMatMul(onnx::InferenceContext& ctx, size_t type_input) {
  onnx::propagateElemTypeFromInputToOutput(ctx, type_input, 0);
  static const onnx::InferenceFunction matmul = InferenceOf("MatMul", 13);
  if (!onnx::hasNInputShapes(ctx, 2) || !matmul) return;
  // MatMul's inference sets the type from input 0 as well; restore ours.
  const int32_t type = ctx.getOutputType(0)->tensor_type().elem_type();
  matmul(ctx);
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(type);
}

void InferBinary(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, 3)) {
    onnx::bidirectionalBroadcastShapeInference(ctx.getInputType(0)->tensor_type().shape(),
                                               ctx.getInputType(3)->tensor_type().shape(),
                                               *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
  }
}

// Inputs Y_scale, Y_zero_point, then (tensor, scale, zero point) per input.
void InferConcat(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  const size_t n = ctx.getNumInputs();
  if (n < 5 || (n - 2) % 3 != 0) return;
  std::vector<Dim> out;
  int64_t axis = onnx::getAttribute(ctx, "axis", 0);
  int64_t concat = 0;
  for (size_t i = 2; i < n; i += 3) {
    if (!onnx::hasInputShape(ctx, i)) return;
    const auto& s = ctx.getInputType(i)->tensor_type().shape();
    if (out.empty()) {
      out.assign(s.dim().begin(), s.dim().end());
      if (axis < 0) axis += s.dim_size();
      if (axis < 0 || axis >= s.dim_size()) return;
    }
    if (s.dim_size() != static_cast<int>(out.size())) return;
    if (concat >= 0 && s.dim(axis).has_dim_value()) {
      concat += s.dim(axis).dim_value();
    } else {
      concat = -1;
    }
  }
  out[axis] = Dim();
  if (concat >= 0) out[axis].set_dim_value(concat);
  SetOutputShape(ctx, 0, out);
}

void InferGlobalPool(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& s = ctx.getInputType(0)->tensor_type().shape();
  if (s.dim_size() < 3) return;
  const bool last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
  std::vector<Dim> out(s.dim().begin(), s.dim().end());
  const int first = last ? 1 : 2, end = last ? s.dim_size() - 1 : s.dim_size();
  for (int i = first; i < end; ++i) {
    out[i] = Dim();
    out[i].set_dim_value(1);
  }
  SetOutputShape(ctx, 0, out);
}

// AveragePool's output size for the spatial dims (NCHW, or NHWC when
// channels_last), explicit pads or auto_pad, floor or ceil.
void InferAveragePool(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& s = ctx.getInputType(0)->tensor_type().shape();
  const auto* kernel_attr = ctx.getAttribute("kernel_shape");
  if (kernel_attr == nullptr) return;
  const std::vector<int64_t> kernel(kernel_attr->ints().begin(), kernel_attr->ints().end());
  const int spatial = static_cast<int>(kernel.size());
  if (s.dim_size() != spatial + 2) return;
  const bool last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
  std::vector<int64_t> strides(spatial, 1), pads(2 * spatial, 0);
  if (const auto* a = ctx.getAttribute("strides")) strides.assign(a->ints().begin(), a->ints().end());
  if (const auto* a = ctx.getAttribute("pads")) pads.assign(a->ints().begin(), a->ints().end());
  if (static_cast<int>(strides.size()) != spatial || static_cast<int>(pads.size()) != 2 * spatial) return;
  const std::string auto_pad = onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
  const bool ceil_mode = onnx::getAttribute(ctx, "ceil_mode", 0) != 0;
  std::vector<Dim> out(s.dim().begin(), s.dim().end());
  for (int i = 0; i < spatial; ++i) {
    const Dim& in = s.dim(last ? 1 + i : 2 + i);
    Dim& o = out[last ? 1 + i : 2 + i];
    o = Dim();
    if (!in.has_dim_value() || strides[i] <= 0) continue;
    const int64_t size = in.dim_value();
    int64_t value;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      value = (size + strides[i] - 1) / strides[i];
    } else if (auto_pad == "VALID") {
      value = (size - kernel[i]) / strides[i] + 1;
    } else {
      const double span = static_cast<double>(size + pads[i] + pads[i + spatial] - kernel[i]) / strides[i];
      value = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
      // A last window starting in the end padding is dropped.
      if (ceil_mode && (value - 1) * strides[i] >= size + pads[i]) --value;
    }
    o.set_dim_value(value);
  }
  SetOutputShape(ctx, 0, out);
}

onnx::OpSchema QLinearBinary(const char* name, const char* formula, const char* file, int line) {
  onnx::OpSchema s = MicrosoftSchema(name, file, line);
  s.Input(0, "A", "First operand.", "T")
      .Input(1, "A_scale", "A's scale (scalar).", "tensor(float)")
      .Input(2, "A_zero_point", "A's zero point (scalar).", "T", onnx::OpSchema::Optional)
      .Input(3, "B", "Second operand.", "T")
      .Input(4, "B_scale", "B's scale (scalar).", "tensor(float)")
      .Input(5, "B_zero_point", "B's zero point (scalar).", "T", onnx::OpSchema::Optional)
      .Input(6, "C_scale", "C's scale (scalar).", "tensor(float)")
      .Input(7, "C_zero_point", "C's zero point (scalar).", "T", onnx::OpSchema::Optional)
      .Output(0, "C", formula, "T")
      .TypeConstraint("T", Int8Types(), "8-bit tensors.")
      .TypeAndShapeInferenceFunction(InferBinary);
  return s;
}

onnx::OpSchema QLinearUnary(const char* name, const char* file, int line) {
  onnx::OpSchema s = MicrosoftSchema(name, file, line);
  s.Input(0, "X", "Input tensor.", "T")
      .Input(1, "X_scale", "X's scale (scalar).", "tensor(float)")
      .Input(2, "X_zero_point", "X's zero point (scalar).", "T", onnx::OpSchema::Optional)
      .Input(3, "Y_scale", "Y's scale (scalar).", "tensor(float)")
      .Input(4, "Y_zero_point", "Y's zero point (scalar).", "T", onnx::OpSchema::Optional)
      .Output(0, "Y", "quantize(f(dequantize(X))).", "T")
      .TypeConstraint("T", Int8Types(), "8-bit tensors.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

void RegisterQuantMatMuls() {
  Register(MicrosoftSchema("MatMulIntegerToFloat", __FILE__, __LINE__)
               .Input(0, "A", "N-dimensional matrix A.", "T1")
               .Input(1, "B", "N-dimensional matrix B.", "T2")
               .Input(2, "a_scale", "A's scale (scalar).", "T3")
               .Input(3, "b_scale", "B's scale (scalar or per column).", "T3")
               .Input(4, "a_zero_point", "A's zero point.", "T1", onnx::OpSchema::Optional)
               .Input(5, "b_zero_point", "B's zero point (scalar or per column).", "T2", onnx::OpSchema::Optional)
               .Input(6, "bias", "Bias over B's last dimension.", "T3", onnx::OpSchema::Optional)
               .Output(0, "Y", "(A - a_zp) x (B - b_zp) * a_scale * b_scale + bias.", "T3")
               .TypeConstraint("T1", Int8Types(), "8-bit A.")
               .TypeConstraint("T2", Int8Types(), "8-bit B.")
               .TypeConstraint("T3", {"tensor(float)", "tensor(float16)"}, "Float scales and output.")
               .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) { InferQuantMatMul(ctx, 2); }));
  Register(MicrosoftSchema("DynamicQuantizeMatMul", __FILE__, __LINE__)
               .Input(0, "A", "N-dimensional float matrix A.", "T1")
               .Input(1, "B", "N-dimensional 8-bit matrix B.", "T2")
               .Input(2, "b_scale", "B's scale (scalar or per column).", "T1")
               .Input(3, "b_zero_point", "B's zero point (scalar or per column).", "T2", onnx::OpSchema::Optional)
               .Input(4, "bias", "Bias over B's last dimension.", "T1", onnx::OpSchema::Optional)
               .Output(0, "Y", "A, quantized to uint8 on the fly, times B, as float.", "T1")
               .TypeConstraint("T1", {"tensor(float)"}, "Float A, scale and output.")
               .TypeConstraint("T2", Int8Types(), "8-bit B.")
               .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) { InferQuantMatMul(ctx, 0); }));
}

void RegisterQLinearPools() {
  Register(MicrosoftSchema("QLinearGlobalAveragePool", __FILE__, __LINE__)
               .Attr("channels_last", "NHWC layout (1).", onnx::AttributeProto::INT, static_cast<int64_t>(0))
               .Input(0, "X", "Input (N, C, spatial...) or (N, spatial..., C).", "T")
               .Input(1, "x_scale", "X's scale (scalar).", "tensor(float)")
               .Input(2, "x_zero_point", "X's zero point (scalar).", "T")
               .Input(3, "y_scale", "Y's scale (scalar).", "tensor(float)")
               .Input(4, "y_zero_point", "Y's zero point (scalar).", "T")
               .Output(0, "Y", "The per-channel average, spatial dimensions 1.", "T")
               .TypeConstraint("T", Int8Types(), "8-bit tensors.")
               .TypeAndShapeInferenceFunction(InferGlobalPool));
  Register(
      MicrosoftSchema("QLinearAveragePool", __FILE__, __LINE__)
          .Attr("auto_pad", "NOTSET, SAME_UPPER, SAME_LOWER or VALID.", onnx::AttributeProto::STRING,
                std::string("NOTSET"))
          .Attr("ceil_mode", "Ceil (1) or floor (0) for the output size.", onnx::AttributeProto::INT,
                static_cast<int64_t>(0))
          .Attr("channels_last", "NHWC layout (1).", onnx::AttributeProto::INT, static_cast<int64_t>(0))
          .Attr("count_include_pad", "Count padding in the average (1).", onnx::AttributeProto::INT,
                static_cast<int64_t>(0))
          .Attr("kernel_shape", "Window size per spatial axis.", onnx::AttributeProto::INTS)
          .Attr("pads", "Begin and end padding per spatial axis.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
          .Attr("strides", "Stride per spatial axis.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
          .Input(0, "X", "Input (N, C, spatial...) or (N, spatial..., C).", "T")
          .Input(1, "x_scale", "X's scale (scalar).", "tensor(float)")
          .Input(2, "x_zero_point", "X's zero point (scalar).", "T", onnx::OpSchema::Optional)
          .Input(3, "y_scale", "Y's scale (scalar).", "tensor(float)")
          .Input(4, "y_zero_point", "Y's zero point (scalar).", "T", onnx::OpSchema::Optional)
          .Output(0, "Y", "AveragePool of the dequantized input, requantized.", "T")
          .TypeConstraint("T", Int8Types(), "8-bit tensors.")
          .TypeAndShapeInferenceFunction(InferAveragePool));
}

}  // namespace

void RegisterContribQuantSchemas() {
  RegisterQuantMatMuls();
  Register(
      QLinearBinary("QLinearAdd", "(A - A_zp) * A_scale + (B - B_zp) * B_scale, requantized.", __FILE__, __LINE__));
  Register(
      QLinearBinary("QLinearMul", "(A - A_zp) * A_scale * (B - B_zp) * B_scale, requantized.", __FILE__, __LINE__));
  Register(QLinearUnary("QLinearSigmoid", __FILE__, __LINE__));
  Register(QLinearUnary("QLinearLeakyRelu", __FILE__, __LINE__)
               .Attr("alpha", "Slope for negative inputs.", onnx::AttributeProto::FLOAT, 0.01f));
  Register(MicrosoftSchema("QLinearConcat", __FILE__, __LINE__)
               .Attr("axis", "Axis to concatenate on.", onnx::AttributeProto::INT)
               .Input(0, "Y_scale", "Y's scale.", "TF")
               .Input(1, "Y_zero_point", "Y's zero point.", "T8")
               .Input(2, "inputs", "(tensor, scale, zero point) per input.", "TV", onnx::OpSchema::Variadic, false)
               .Output(0, "Y", "The concatenation, requantized to Y's parameters.", "T8")
               .TypeConstraint("T8", Int8Types(), "8-bit tensors.")
               .TypeConstraint("TF", {"tensor(float)"}, "Scales.")
               .TypeConstraint("TV", {"tensor(uint8)", "tensor(int8)", "tensor(float)"}, "Inputs and their parameters.")
               .TypeAndShapeInferenceFunction(InferConcat));
  RegisterQLinearPools();
}

}  // namespace onyx::schemas
