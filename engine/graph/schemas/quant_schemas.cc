// QuantizeLinear and DequantizeLinear at 19 (float16/bfloat16 scales, the
// saturate attribute), 21 (blocked quantization: block_size; 16-bit types;
// QuantizeLinear's output_dtype) and 23 (QuantizeLinear's precision,
// DequantizeLinear's output_dtype). The float8, 4-bit and float4 types of
// these versions are left out of the constraints: onnx 1.12 cannot name them,
// and the engine refuses them when it loads the model.
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

const char* const kAxisDoc =
    "Axis of the per-axis or blocked quantization; negative counts from the back. Ignored for per-tensor "
    "quantization.";
const char* const kBlockDoc =
    "Block size along `axis` for blocked quantization (scale and zero point have the input's rank and "
    "ceil(D_axis / block_size) entries along `axis`); 0 means per-tensor or per-axis.";

// The output type: y_zero_point's, else output_dtype, else uint8 (opset 21's
// rule; 19 has no output_dtype and the same result).
void InferQuantize(onnx::InferenceContext& ctx) {
  const auto output_dtype = static_cast<int32_t>(onnx::getAttribute(ctx, "output_dtype", 0));
  const onnx::TypeProto* zp = ctx.getNumInputs() > 2 ? ctx.getInputType(2) : nullptr;
  if (zp != nullptr) {
    const int32_t zp_type = zp->tensor_type().elem_type();
    if (output_dtype != 0 && output_dtype != zp_type) {
      fail_type_inference("output_dtype ", output_dtype, " does not match the y_zero_point type ", zp_type);
    }
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  } else if (output_dtype != 0) {
    ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(output_dtype);
  } else {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
  }
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// The output type: output_dtype (23) when set, else x_scale's.
void InferDequantize(onnx::InferenceContext& ctx) {
  const auto output_dtype = static_cast<int32_t>(onnx::getAttribute(ctx, "output_dtype", 0));
  if (output_dtype != 0) {
    ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(output_dtype);
  } else {
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  }
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

const std::vector<std::string> kScaleFloats = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"};

std::vector<std::string> QuantTypes(int version) {
  std::vector<std::string> t = {"tensor(int8)", "tensor(uint8)"};
  if (version >= 21) {
    t.push_back("tensor(int16)");
    t.push_back("tensor(uint16)");
  }
  return t;
}

onnx::OpSchema Quantize(int version) {
  onnx::OpSchema s("QuantizeLinear", __FILE__, __LINE__);
  // 19 and 21 share one type for x and the scale; 23 separates them.
  const char* scale_type = version >= 23 ? "T2" : "T1";
  const char* out_type = version >= 23 ? "T3" : "T2";
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("axis", kAxisDoc, onnx::AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("saturate", "Saturation of float8 outputs (which onyx does not support).", onnx::AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "x", "Full-precision input.", "T1")
      .Input(1, "y_scale", "Scale: scalar, 1-D along `axis`, or blocked.", scale_type)
      .Input(2, "y_zero_point", "Zero point shaped as y_scale; its type is the output's.", out_type,
             onnx::OpSchema::Optional)
      .Output(0, "y", "Quantized output, shaped as x.", out_type)
      .TypeConstraint("T1", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(int32)"}, "Input types.")
      .TypeAndShapeInferenceFunction(InferQuantize);
  if (version >= 21) {
    s.Attr("block_size", kBlockDoc, onnx::AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("output_dtype", "Output type when y_zero_point is absent (it must match when present); 0: uint8.",
              onnx::AttributeProto::INT, static_cast<int64_t>(0));
  }
  if (version >= 23) {
    s.Attr("precision", "Type the division x / y_scale is computed in; 0: y_scale's type.", onnx::AttributeProto::INT,
           static_cast<int64_t>(0))
        .TypeConstraint("T2", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(int32)"},
                        "Scale types.");
  }
  s.TypeConstraint(out_type, QuantTypes(version), "Quantized types.");
  return s;
}

onnx::OpSchema Dequantize(int version) {
  onnx::OpSchema s("DequantizeLinear", __FILE__, __LINE__);
  const char* out_type = version >= 23 ? "T3" : "T2";
  std::vector<std::string> in_types = QuantTypes(version);
  in_types.push_back("tensor(int32)");
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("axis", kAxisDoc, onnx::AttributeProto::INT, static_cast<int64_t>(1))
      .Input(0, "x", "Quantized input.", "T1")
      .Input(1, "x_scale", "Scale: scalar, 1-D along `axis`, or blocked.", "T2")
      .Input(2, "x_zero_point", "Zero point shaped as x_scale.", "T1", onnx::OpSchema::Optional)
      .Output(0, "y", "Full-precision output, shaped as x.", out_type)
      .TypeConstraint("T1", std::move(in_types), "Quantized types.")
      .TypeConstraint("T2", kScaleFloats, "Scale types.")
      .TypeAndShapeInferenceFunction(InferDequantize);
  if (version >= 21) s.Attr("block_size", kBlockDoc, onnx::AttributeProto::INT, static_cast<int64_t>(0));
  if (version >= 23) {
    s.Attr("output_dtype", "Output type; 0: x_scale's type.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
        .TypeConstraint("T3", kScaleFloats, "Output types.");
  }
  return s;
}

}  // namespace

void RegisterQuantSchemas() {
  for (int version : {19, 21, 23}) {
    Register(Quantize(version));
    Register(Dequantize(version));
  }
}

}  // namespace onyx::schemas
