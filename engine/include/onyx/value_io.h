// Reading and writing values as ONNX protobuf files — the layout of the ONNX
// backend test data (input_0.pb, output_0.pb, ...): a TensorProto for tensors,
// a SequenceProto for sequences, an OptionalProto for optionals.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "onyx/tensor.h"
#include "onyx/value_info.h"

namespace onyx {

// Parses `path` as the message matching `kind`. Errors name the file.
absl::StatusOr<Value> ReadValueFile(const std::string& path, ValueInfo::Kind kind);

// Writes `value` as the message matching `kind`, with `name` set.
absl::Status WriteValueFile(const std::string& path, const Value& value, ValueInfo::Kind kind, const std::string& name);

}  // namespace onyx
