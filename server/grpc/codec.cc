#include "server/grpc/codec.h"

#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onyx::server {

static_assert(std::endian::native == std::endian::little,
              "raw tensor contents are little-endian; onyx copies them as is");

namespace {

using onyx::DataType;

struct WireType {
  absl::string_view name;
  DataType type;
  inference::DataType config;
};

constexpr WireType kWireTypes[] = {
    {"BOOL", DataType::kBool, inference::TYPE_BOOL},
    {"UINT8", DataType::kUint8, inference::TYPE_UINT8},
    {"UINT16", DataType::kUint16, inference::TYPE_UINT16},
    {"UINT32", DataType::kUint32, inference::TYPE_UINT32},
    {"UINT64", DataType::kUint64, inference::TYPE_UINT64},
    {"INT8", DataType::kInt8, inference::TYPE_INT8},
    {"INT16", DataType::kInt16, inference::TYPE_INT16},
    {"INT32", DataType::kInt32, inference::TYPE_INT32},
    {"INT64", DataType::kInt64, inference::TYPE_INT64},
    {"FP16", DataType::kFloat16, inference::TYPE_FP16},
    {"FP32", DataType::kFloat, inference::TYPE_FP32},
    {"FP64", DataType::kDouble, inference::TYPE_FP64},
    {"BF16", DataType::kBFloat16, inference::TYPE_BF16},
    {"BYTES", DataType::kString, inference::TYPE_STRING},
};

uint32_t LoadLittleEndian32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

void AppendLittleEndian32(uint32_t v, std::string* out) {
  const char bytes[4] = {static_cast<char>(v), static_cast<char>(v >> 8),
                         static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  out->append(bytes, 4);
}

// Copies `field` into `out` converting each value to T; narrow integer types
// are range-checked against T.
template <typename T, typename Field>
absl::Status CopyField(const Field& field, onyx::Tensor* out, absl::string_view wire) {
  T* dst = out->mutable_data<T>();
  for (int i = 0; i < field.size(); ++i) {
    const auto& v = field.Get(i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                  std::is_integral_v<std::decay_t<decltype(v)>>) {
      if (!std::in_range<T>(v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("value ", v, " at element ", i, " is out of range for ", wire));
      }
    }
    dst[i] = static_cast<T>(v);
  }
  return absl::OkStatus();
}

// The typed field that carries `type`, and its size.
int FieldSizeFor(DataType type, const inference::InferTensorContents& c,
                 absl::string_view* field_name) {
  switch (type) {
    case DataType::kBool:
      *field_name = "bool_contents";
      return c.bool_contents_size();
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
      *field_name = "int_contents";
      return c.int_contents_size();
    case DataType::kInt64:
      *field_name = "int64_contents";
      return c.int64_contents_size();
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
      *field_name = "uint_contents";
      return c.uint_contents_size();
    case DataType::kUint64:
      *field_name = "uint64_contents";
      return c.uint64_contents_size();
    case DataType::kFloat:
      *field_name = "fp32_contents";
      return c.fp32_contents_size();
    case DataType::kDouble:
      *field_name = "fp64_contents";
      return c.fp64_contents_size();
    case DataType::kString:
      *field_name = "bytes_contents";
      return c.bytes_contents_size();
    default:
      *field_name = "";
      return -1;
  }
}

int TotalTypedValues(const inference::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() +
         c.uint_contents_size() + c.uint64_contents_size() + c.fp32_contents_size() +
         c.fp64_contents_size() + c.bytes_contents_size();
}

// The names of the non-empty typed fields other than `except`, comma-separated.
std::string OtherFieldsSet(const inference::InferTensorContents& c, absl::string_view except) {
  const std::pair<absl::string_view, int> fields[] = {
      {"bool_contents", c.bool_contents_size()},   {"int_contents", c.int_contents_size()},
      {"int64_contents", c.int64_contents_size()}, {"uint_contents", c.uint_contents_size()},
      {"uint64_contents", c.uint64_contents_size()}, {"fp32_contents", c.fp32_contents_size()},
      {"fp64_contents", c.fp64_contents_size()},   {"bytes_contents", c.bytes_contents_size()},
  };
  std::string names;
  for (const auto& [name, size] : fields) {
    if (size > 0 && name != except) absl::StrAppend(&names, names.empty() ? "" : ", ", name);
  }
  return names;
}

// Walks the length prefixes of `count` BYTES elements without allocating, so
// that a shape claiming more elements than the bytes can hold costs nothing.
absl::Status CheckRawBytesLayout(int64_t count, absl::string_view raw) {
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (raw.size() - pos < 4) {
      return absl::InvalidArgumentError(absl::StrCat("BYTES raw contents end after ", i, " of ",
                                                     count, " elements (", raw.size(), " bytes)"));
    }
    const uint32_t length = LoadLittleEndian32(raw.data() + pos);
    pos += 4;
    if (raw.size() - pos < length) {
      return absl::InvalidArgumentError(absl::StrCat("BYTES element ", i, " declares ", length,
                                                     " bytes but only ", raw.size() - pos,
                                                     " remain"));
    }
    pos += length;
  }
  if (pos != raw.size()) {
    return absl::InvalidArgumentError(absl::StrCat("BYTES raw contents hold ", raw.size() - pos,
                                                   " bytes after the last of ", count,
                                                   " elements"));
  }
  return absl::OkStatus();
}

absl::StatusOr<onyx::Tensor> DecodeRawBytes(absl::Span<const int64_t> dims, int64_t count,
                                            absl::string_view raw) {
  if (absl::Status s = CheckRawBytesLayout(count, raw); !s.ok()) return s;
  onyx::Tensor tensor = onyx::Tensor::Allocate(DataType::kString, dims);
  std::string* out = tensor.mutable_data<std::string>();
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t length = LoadLittleEndian32(raw.data() + pos);
    out[i].assign(raw.data() + pos + 4, length);
    pos += 4 + length;
  }
  return tensor;
}

}  // namespace

absl::StatusOr<DataType> WireToDataType(absl::string_view datatype) {
  for (const WireType& w : kWireTypes) {
    if (w.name == datatype) return w.type;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown datatype '", datatype,
      "' (expected BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, "
      "FP64, BF16 or BYTES)"));
}

absl::string_view DataTypeToWire(DataType type) {
  for (const WireType& w : kWireTypes) {
    if (w.type == type) return w.name;
  }
  return "";
}

inference::DataType DataTypeToConfig(DataType type) {
  for (const WireType& w : kWireTypes) {
    if (w.type == type) return w.config;
  }
  return inference::TYPE_INVALID;
}

absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> dims) {
  bool empty = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("shape ", onyx::DimsToString(dims),
                                                     " has a negative dimension (dim ", i, " is ",
                                                     dims[i], ")"));
    }
    empty = empty || dims[i] == 0;
  }
  if (empty) return 0;
  int64_t count = 1;
  for (int64_t d : dims) {
    if (count > std::numeric_limits<int64_t>::max() / d) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape ", onyx::DimsToString(dims), ": the product of its dimensions overflows int64"));
    }
    count *= d;
  }
  return count;
}

namespace {

// Checks that `raw` holds exactly the bytes of a fixed-size `type` x `dims`.
absl::Status CheckRawSize(DataType type, absl::Span<const int64_t> dims, int64_t count,
                          absl::string_view raw) {
  const size_t element = onyx::ElementSize(type);
  if (element == 0 || DataTypeToWire(type).empty()) {
    return absl::InvalidArgumentError("unsupported datatype");
  }
  if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / element) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", onyx::DimsToString(dims), " of ",
                                                   DataTypeToWire(type),
                                                   ": the byte size overflows 64 bits"));
  }
  const size_t expected = static_cast<size_t>(count) * element;
  if (raw.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", expected, " bytes of raw contents for ", DataTypeToWire(type),
                     " ", onyx::DimsToString(dims), ", received ", raw.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<onyx::Tensor> ViewRawTensor(DataType type, absl::Span<const int64_t> dims,
                                           absl::string_view raw, std::shared_ptr<void> owner) {
  if (type == DataType::kString || type == DataType::kBool) return DecodeRawTensor(type, dims, raw);
  absl::StatusOr<int64_t> count = CheckedNumElements(dims);
  if (!count.ok()) return count.status();
  if (absl::Status s = CheckRawSize(type, dims, *count, raw); !s.ok()) return s;
  if (raw.empty()) return onyx::Tensor::Allocate(type, dims);  // no bytes to view
  // The engine only reads its feeds; the bytes are the request's, not ours to write.
  void* data = const_cast<char*>(raw.data());
  if (owner == nullptr) return onyx::Tensor::Wrap(type, dims, data);
  return onyx::Tensor::FromBuffer(type, dims, data, std::move(owner));
}

absl::StatusOr<onyx::Tensor> DecodeRawTensor(DataType type, absl::Span<const int64_t> dims,
                                             absl::string_view raw) {
  absl::StatusOr<int64_t> count = CheckedNumElements(dims);
  if (!count.ok()) return count.status();
  if (type == DataType::kString) return DecodeRawBytes(dims, *count, raw);
  if (absl::Status s = CheckRawSize(type, dims, *count, raw); !s.ok()) return s;
  const size_t expected = raw.size();
  onyx::Tensor tensor = onyx::Tensor::Allocate(type, dims);
  if (expected > 0) std::memcpy(tensor.mutable_raw(), raw.data(), expected);
  if (type == DataType::kBool) {
    // Any non-zero byte is true; keep the engine's bools canonical.
    uint8_t* b = static_cast<uint8_t*>(tensor.mutable_raw());
    for (size_t i = 0; i < expected; ++i) b[i] = b[i] != 0;
  }
  return tensor;
}

absl::StatusOr<onyx::Tensor> DecodeTypedTensor(DataType type, absl::Span<const int64_t> dims,
                                               const inference::InferTensorContents& contents) {
  absl::StatusOr<int64_t> count = CheckedNumElements(dims);
  if (!count.ok()) return count.status();
  const absl::string_view wire = DataTypeToWire(type);
  absl::string_view field_name;
  const int field_size = FieldSizeFor(type, contents, &field_name);
  if (field_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(wire, " data can only be sent in raw_input_contents"));
  }
  // The wrong field first: "expected 48 values, received 0" would hide it.
  if (TotalTypedValues(contents) != field_size) {
    return absl::InvalidArgumentError(absl::StrCat(wire, " data must be in ", field_name,
                                                   " only; received values in ",
                                                   OtherFieldsSet(contents, field_name)));
  }
  if (field_size != *count) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", *count, " values in ", field_name,
                                                   " for ", wire, " ", onyx::DimsToString(dims),
                                                   ", received ", field_size));
  }
  onyx::Tensor tensor = onyx::Tensor::Allocate(type, dims);
  absl::Status status;
  switch (type) {
    case DataType::kBool:
      status = CopyField<bool>(contents.bool_contents(), &tensor, wire);
      break;
    case DataType::kInt8:
      status = CopyField<int8_t>(contents.int_contents(), &tensor, wire);
      break;
    case DataType::kInt16:
      status = CopyField<int16_t>(contents.int_contents(), &tensor, wire);
      break;
    case DataType::kInt32:
      status = CopyField<int32_t>(contents.int_contents(), &tensor, wire);
      break;
    case DataType::kInt64:
      status = CopyField<int64_t>(contents.int64_contents(), &tensor, wire);
      break;
    case DataType::kUint8:
      status = CopyField<uint8_t>(contents.uint_contents(), &tensor, wire);
      break;
    case DataType::kUint16:
      status = CopyField<uint16_t>(contents.uint_contents(), &tensor, wire);
      break;
    case DataType::kUint32:
      status = CopyField<uint32_t>(contents.uint_contents(), &tensor, wire);
      break;
    case DataType::kUint64:
      status = CopyField<uint64_t>(contents.uint64_contents(), &tensor, wire);
      break;
    case DataType::kFloat:
      status = CopyField<float>(contents.fp32_contents(), &tensor, wire);
      break;
    case DataType::kDouble:
      status = CopyField<double>(contents.fp64_contents(), &tensor, wire);
      break;
    case DataType::kString:
      status = CopyField<std::string>(contents.bytes_contents(), &tensor, wire);
      break;
    default:
      status = absl::InvalidArgumentError("unsupported datatype");
      break;
  }
  if (!status.ok()) return status;
  return tensor;
}

bool HasTypedContents(const inference::InferTensorContents& contents) {
  return TotalTypedValues(contents) > 0;
}

absl::Status EncodeRawTensor(const onyx::Tensor& tensor, std::string* raw) {
  if (DataTypeToWire(tensor.type()).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor type ",
                                                   std::string(onyx::DataTypeName(tensor.type())),
                                                   " cannot be sent over the KServe protocol"));
  }
  if (tensor.type() == DataType::kString) {
    const std::string* s = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      AppendLittleEndian32(static_cast<uint32_t>(s[i].size()), raw);
      raw->append(s[i]);
    }
    return absl::OkStatus();
  }
  const size_t offset = raw->size();
  if (tensor.byte_size() == 0) return absl::OkStatus();
  raw->append(static_cast<const char*>(tensor.raw()), tensor.byte_size());
  if (tensor.type() == DataType::kBool) {
    for (size_t i = offset; i < raw->size(); ++i) (*raw)[i] = (*raw)[i] != 0;
  }
  return absl::OkStatus();
}

}  // namespace onyx::server
