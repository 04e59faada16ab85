// One Register function per op family of the newer-opset schemas; each lives
// in its own <family>_schemas.cc and is called once by
// RegisterNewerOpsetSchemas after the version range has been raised.
#pragma once

#include <string>
#include <vector>

#include "onnx/defs/schema.h"

namespace onyx::schemas {

void RegisterReduceSchemas();  // reduce_schemas.cc: Reduce*-18, ReduceMax/Min-20
void RegisterMlSchemas();      // ml_schemas.cc: ai.onnx.ml 4-5 (LabelEncoder-4, TreeEnsemble-5)

// Registers `schema` (name, domain and version already set) with onnx.
void Register(onnx::OpSchema schema);

// Type lists as onnx spells them, for TypeConstraint.
std::vector<std::string> FloatTypes();      // float16, float, double, bfloat16
std::vector<std::string> NumericTypes();    // every integer and float type
std::vector<std::string> AllTensorTypes();  // numeric, bool, string, complex

}  // namespace onyx::schemas
