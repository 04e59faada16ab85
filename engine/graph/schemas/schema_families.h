// One Register function per op family of the newer-opset schemas; each lives
// in its own <family>_schemas.cc and is called once by
// RegisterNewerOpsetSchemas after the version range has been raised.
#pragma once

#include <string>
#include <vector>

#include "onnx/defs/schema.h"

namespace onyx::schemas {

void RegisterReduceSchemas();    // reduce_schemas.cc: Reduce*-18, ReduceMax/Min-20
void RegisterTensorSchemas();    // tensor_schemas.cc: Split, Pad, Resize, Scatter*, Cast, CenterCropPad, Col2Im
void RegisterResizeSchemas();    // resize_schemas.cc: Resize-18/19 (called by RegisterTensorSchemas)
void RegisterNnSchemas();        // nn_schemas.cc: GroupNormalization, Mish, pools, DeformConv, Gelu, Bitwise*
void RegisterGridSchemas();      // grid_schemas.cc: GridSample-20/22, AffineGrid-20 (called by RegisterNnSchemas)
void RegisterQuantSchemas();     // quant_schemas.cc: QuantizeLinear, DequantizeLinear-19/21/23
void RegisterLlmSchemas();       // llm_schemas.cc: RMSNormalization, RotaryEmbedding, Attention-23
void RegisterSignalSchemas();    // signal_schemas.cc: DFT-20
void RegisterStringSchemas();    // string_schemas.cc: StringConcat, StringSplit, RegexFullMatch-20
void RegisterOptionalSchemas();  // optional_schemas.cc: OptionalHasElement, OptionalGetElement-18
void RegisterContribSchemas();   // contrib_schemas.cc: com.microsoft opset 1 (ONNX Runtime's contrib ops)
void RegisterMlSchemas();        // ml_schemas.cc: ai.onnx.ml 4-5 (LabelEncoder-4, TreeEnsemble-5)
void RegisterBfloat16Schemas();  // bfloat16_schemas.cc: the opset-22 bfloat16 type bumps (call last)

// Registers `schema` (name, domain and version already set) with onnx.
void Register(onnx::OpSchema schema);

// Propagates input 0's element type to output 0 and, when input 0's shape
// is known, gives output 0 that rank with unknown dims and returns it for the
// caller to fill in; nullptr when input 0's shape is unknown.
onnx::TensorShapeProto* SameRankOutputShape(onnx::InferenceContext& ctx);

// Type lists as onnx spells them, for TypeConstraint.
std::vector<std::string> FloatTypes();      // float16, float, double, bfloat16
std::vector<std::string> NumericTypes();    // every integer and float type
std::vector<std::string> AllTensorTypes();  // numeric, bool, string, complex

}  // namespace onyx::schemas
