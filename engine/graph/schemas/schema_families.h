// One Register function per op family of the newer-opset schemas; each lives
// in its own <family>_schemas.cc and is called once by
// RegisterNewerOpsetSchemas after the version range has been raised.
#pragma once

#include <string>
#include <vector>

#include "onnx/defs/schema.h"

namespace onyx::schemas {

void RegisterReduceSchemas();  // reduce_schemas.cc: Reduce*-18, ReduceMax/Min-20
void RegisterQuantSchemas();   // quant_schemas.cc: QuantizeLinear, DequantizeLinear-19/21/23
void RegisterLlmSchemas();     // llm_schemas.cc: RMSNormalization, RotaryEmbedding, Attention-23
void RegisterSignalSchemas();  // signal_schemas.cc: DFT-20
void RegisterStringSchemas();  // string_schemas.cc: StringConcat, StringSplit, RegexFullMatch-20
void RegisterOptionalSchemas();  // optional_schemas.cc: OptionalHasElement, OptionalGetElement-18

// Registers `schema` (name, domain and version already set) with onnx.
void Register(onnx::OpSchema schema);

// Type lists as onnx spells them, for TypeConstraint.
std::vector<std::string> FloatTypes();      // float16, float, double, bfloat16
std::vector<std::string> NumericTypes();    // every integer and float type
std::vector<std::string> AllTensorTypes();  // numeric, bool, string, complex

}  // namespace onyx::schemas
