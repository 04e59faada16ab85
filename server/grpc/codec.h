// Tensor codec between the KServe v2 wire format and onyx::Tensor.
//
//   ASSIGN_OR_RETURN(onyx::DataType type, WireToDataType("FP32"));
//   ASSIGN_OR_RETURN(onyx::Tensor x, DecodeRawTensor(type, {2, 4}, raw_bytes));
//   ASSIGN_OR_RETURN(onyx::Tensor y, DecodeTypedTensor(type, {2, 4}, input.contents()));
//   RETURN_IF_ERROR(EncodeRawTensor(output, response.add_raw_output_contents()));
//
// Encodings (PROTOCOL.md): raw contents are row-major, little-endian, unpadded;
// BOOL is one byte per element; BYTES is, per element, a 4-byte little-endian
// length then the bytes. Typed contents: INT8/16/32 in int_contents, UINT8/16/32
// in uint_contents, INT64 int64_contents, UINT64 uint64_contents, FP32
// fp32_contents, FP64 fp64_contents, BOOL bool_contents, BYTES bytes_contents;
// FP16 and BF16 only raw. Errors are INVALID_ARGUMENT stating expected vs
// received; callers prefix the model and input names.
// Pure functions: thread-safe.
#pragma once

#include <memory>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "grpc_service.pb.h"
#include "model_config.pb.h"
#include "onyx/tensor.h"

namespace onyx::server {

// "BOOL", "UINT8".."UINT64", "INT8".."INT64", "FP16", "BF16", "FP32", "FP64",
// "BYTES" (case-sensitive) → engine type.
absl::StatusOr<onyx::DataType> WireToDataType(absl::string_view datatype);

// Engine type → wire name; "" for a type the protocol cannot carry (complex).
absl::string_view DataTypeToWire(onyx::DataType type);

// Engine type → Triton ModelConfig enum; TYPE_INVALID when there is none.
inference::DataType DataTypeToConfig(onyx::DataType type);

// Element count of `dims`: INVALID_ARGUMENT naming the shape for a negative
// dim or a product that overflows int64 (0 when any dim is 0). Callers apply
// their own limit (max_elements_per_input) before decoding.
absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> dims);

// Decodes one raw_input_contents entry. The byte size must match the type and
// shape exactly (for BYTES: the element count and the length prefixes); it is
// checked before the tensor is allocated.
absl::StatusOr<onyx::Tensor> DecodeRawTensor(onyx::DataType type, absl::Span<const int64_t> dims,
                                             absl::string_view raw);

// DecodeRawTensor without the copy: for fixed-size types other than BOOL the
// tensor views `raw` in place (zero-copy), and `raw` must stay alive and
// unchanged for as long as the tensor is read; `owner`, when not null, is held
// by the tensor to that end. BOOL (canonicalised to 0/1) and BYTES are decoded
// into fresh storage as DecodeRawTensor does. Same checks and errors.
absl::StatusOr<onyx::Tensor> ViewRawTensor(onyx::DataType type, absl::Span<const int64_t> dims,
                                           absl::string_view raw, std::shared_ptr<void> owner);

// Decodes typed `contents`. Exactly the field for `type` holds one value per
// element; every other field is empty; narrow integer values are range-checked.
absl::StatusOr<onyx::Tensor> DecodeTypedTensor(onyx::DataType type, absl::Span<const int64_t> dims,
                                               const inference::InferTensorContents& contents);

// True when `contents` holds at least one value in any field.
bool HasTypedContents(const inference::InferTensorContents& contents);

// Appends the raw encoding of `tensor` to `raw`. INVALID_ARGUMENT for a type
// the protocol cannot carry.
absl::Status EncodeRawTensor(const onyx::Tensor& tensor, std::string* raw);

}  // namespace onyx::server
