// Tensors as onyx-load sends and checks them: KServe v2 datatype names,
// shapes, and raw little-endian bytes (BYTES elements each prefixed by a
// 4-byte length), plus generated inputs and output comparison.
//
//   ASSIGN_OR_RETURN(TensorValue x, MakeTensor("input", "FP32", {8, 16}, Fill::kRandom, &rng));
//   ASSIGN_OR_RETURN(inference::InferTensorContents c, TypedContents(x));   // --encoding typed
//
// Pure functions (the generator is the caller's); thread-compatible.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "grpc_service.pb.h"

namespace onyx::load {

struct TensorValue {
  std::string name;
  std::string datatype;  // "FP32", "INT64", "BYTES", ...
  std::vector<int64_t> shape;
  std::string raw;  // row-major little-endian bytes, as raw_input_contents carries them
};

// Bytes per element of a KServe datatype; 0 for BYTES; -1 when unknown.
int DatatypeSize(absl::string_view datatype);
int64_t ElementCount(const std::vector<int64_t>& shape);

enum class Fill { kRandom, kZeros };

// Floating point uniform in [-1, 1); integers in [0, 8); BOOL 0/1; BYTES
// 8 printable characters each. INVALID_ARGUMENT for an unknown datatype or a
// negative dimension, naming the tensor.
absl::StatusOr<TensorValue> MakeTensor(std::string name, std::string datatype, std::vector<int64_t> shape, Fill fill,
                                       std::mt19937_64* rng);

// The typed-contents form of `t` (FP16/BF16 have none: INVALID_ARGUMENT).
absl::StatusOr<inference::InferTensorContents> TypedContents(const TensorValue& t);

// Builds `t.raw` from numbers (JSON data): each value converted to the
// datatype. INVALID_ARGUMENT when the count does not match the shape.
absl::Status FillFromNumbers(const std::vector<double>& values, TensorValue* t);
absl::Status FillFromStrings(const std::vector<std::string>& values, TensorValue* t);

// "" when `raw` (datatype, shape) equals `want` within rtol 1e-3 / atol 1e-5
// for floating point and exactly otherwise; else what differs.
std::string CompareOutput(const TensorValue& want, absl::string_view datatype, const std::vector<int64_t>& shape,
                          absl::string_view raw);

uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);

}  // namespace onyx::load
