// Conversions between onyx values and the ONNX protobuf messages that carry
// data: TensorProto (initializers, test data), SequenceProto and OptionalProto.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"
#include "onyx/tensor.h"

namespace onyx {

// Decodes any storage form: raw_data, the typed repeated fields, or external
// data (a file relative to `base_dir`, with optional offset and length).
// Errors name the tensor and say what is wrong (size mismatch, unknown type...).
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir = "");

// Like TensorFromProto, but takes raw_data out of `proto` instead of copying it
// (the tensor then owns that buffer; it is 16-byte aligned). For loading large
// initializers without holding them twice.
absl::StatusOr<Tensor> TakeTensorFromProto(onnx::TensorProto* proto, const std::string& base_dir = "");

// The file that external data `proto` names under `base_dir`, refused
// (INVALID_ARGUMENT naming the tensor and why) unless it is a relative
// location without "..", a regular file (not a symlink) with one hard link,
// and its resolved path lies inside the resolved `base_dir`: a model file
// must not make onyx read anything outside its own directory. NOT_FOUND when
// the file does not exist. TensorFromProto checks this before reading.
absl::StatusOr<std::string> ExternalDataPath(const onnx::TensorProto& proto, const std::string& base_dir);

// Encodes as raw_data (string tensors use string_data).
onnx::TensorProto TensorToProto(const Tensor& tensor, const std::string& name);

absl::StatusOr<Value> ValueFromSequenceProto(const onnx::SequenceProto& proto);
onnx::SequenceProto ValueToSequenceProto(const Value& value, const std::string& name);
absl::StatusOr<Value> ValueFromOptionalProto(const onnx::OptionalProto& proto);
onnx::OptionalProto ValueToOptionalProto(const Value& value, const std::string& name);

}  // namespace onyx
