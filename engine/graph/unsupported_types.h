// The ONNX element types newer than the engine's DataType (float8, 4-bit,
// float4, 2-bit: TensorProto data types 17-26). Models that carry them are
// refused when they load, naming the node that reads or writes such a value
// rather than only the value, so that the message says which op and which
// opset version asked for a type the engine cannot hold.
//
//   RETURN_IF_ERROR(CheckElementTypes(model.graph(), opsets));
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace onyx {

// ONNX's name of a newer element type ("float8e4m3fn", "uint4", "int4",
// "float4e2m1", ...); nullptr for the types DataType has and for unknown ones.
const char* NewerElementTypeName(int32_t onnx_type);

// UNIMPLEMENTED naming the first node of `graph` or of its subgraphs, with its
// op and resolved opset version, that reads or writes a value of a newer
// element type (an initializer, or a graph input, output or value_info whose
// declared type is one); or naming the value when no node touches it.
// `opsets` maps domain -> version as the model imports them.
absl::Status CheckElementTypes(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets);

}  // namespace onyx
