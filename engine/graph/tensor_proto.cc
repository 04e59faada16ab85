#include "graph/tensor_proto.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"

namespace onyx {
namespace {

std::string TensorLabel(const onnx::TensorProto& proto) {
  return proto.name().empty() ? std::string("<unnamed tensor>") : "'" + proto.name() + "'";
}

// An external-data "offset" or "length" value: a non-negative decimal integer
// that fits int64_t. Anything else is the model's error, not a crash.
absl::StatusOr<int64_t> ParseExternalDataNumber(const onnx::TensorProto& proto, const std::string& key,
                                                const std::string& value) {
  int64_t number = 0;
  if (!absl::SimpleAtoi(value, &number) || number < 0) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), ": external data key '", key,
                                                   "' expects a non-negative 64-bit integer, received '", value, "'"));
  }
  return number;
}

std::string ExternalLocation(const onnx::TensorProto& proto) {
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") return entry.value();
  }
  return "";
}

}  // namespace

absl::StatusOr<std::string> ExternalDataPath(const onnx::TensorProto& proto, const std::string& base_dir) {
  const std::string location = ExternalLocation(proto);
  const std::string label = absl::StrCat("tensor ", TensorLabel(proto), ": external data location '", location, "'");
  if (location.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), ": external data has no 'location'"));
  }
  if (location.find("..") != std::string::npos || location[0] == '/') {
    return absl::InvalidArgumentError(absl::StrCat(label, " must be a relative path inside the model directory"));
  }
  const std::string path = base_dir.empty() ? location : base_dir + "/" + location;
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("tensor ", TensorLabel(proto), ": cannot open external data file '", path,
                                            "': ", std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(label, " is a symbolic link; onyx reads only regular files"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(label, " is not a regular file"));
  }
  if (st.st_nlink > 1) {
    return absl::InvalidArgumentError(absl::StrCat(label, " has ", st.st_nlink,
                                                   " hard links; onyx reads only files with one (a hard link can "
                                                   "reach a file outside the model directory)"));
  }
  // A directory on the way may still be a symlink leading out.
  std::error_code ec;
  const std::filesystem::path real_file = std::filesystem::canonical(path, ec);
  const std::filesystem::path real_base = std::filesystem::canonical(base_dir.empty() ? "." : base_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(label, " cannot be resolved: ", ec.message()));
  }
  auto [base_end, file_it] = std::mismatch(real_base.begin(), real_base.end(), real_file.begin(), real_file.end());
  if (base_end != real_base.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, " resolves to ", real_file.string(), ", outside the model directory ", real_base.string()));
  }
  return path;
}

namespace {

absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& proto, const std::string& base_dir) {
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "offset") {
      ASSIGN_OR_RETURN(offset, ParseExternalDataNumber(proto, "offset", entry.value()));
    } else if (entry.key() == "length") {
      ASSIGN_OR_RETURN(length, ParseExternalDataNumber(proto, "length", entry.value()));
    }
  }
  ASSIGN_OR_RETURN(const std::string path, ExternalDataPath(proto, base_dir));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("tensor ", TensorLabel(proto), ": cannot open external data file '", path, "'"));
  }
  in.seekg(0, std::ios::end);
  const int64_t file_size = in.tellg();
  if (file_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", TensorLabel(proto), ": cannot read the size of external data file '", path, "'"));
  }
  // Both values are non-negative: neither the comparisons nor the unsigned sum
  // below can overflow.
  if (offset > file_size) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), ": external data 'offset' ", offset,
                                                   " is past the end of file '", path, "' of ", file_size, " bytes"));
  }
  if (length.has_value() && *length > file_size - offset) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), ": external data 'length' ", *length,
                                                   " at 'offset' ", offset, " ends at byte ",
                                                   static_cast<uint64_t>(offset) + static_cast<uint64_t>(*length),
                                                   ", past the end of file '", path, "' of ", file_size, " bytes"));
  }
  const int64_t size = length.value_or(file_size - offset);
  std::string bytes(size, '\0');
  in.seekg(offset);
  in.read(bytes.data(), size);
  if (in.gcount() != size) {
    return absl::DataLossError(absl::StrCat("tensor ", TensorLabel(proto), ": read ", in.gcount(), " of ", size,
                                            " bytes at offset ", offset, " of external data file '", path, "'"));
  }
  return bytes;
}

// The element count of `dims`, refused when it does not fit int64.
absl::StatusOr<int64_t> CheckedElementCount(const onnx::TensorProto& proto, const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > INT64_MAX / d) {
      return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), ": shape ", DimsToString(dims),
                                                     " has more elements than a 64-bit count holds"));
    }
    n *= d;
  }
  return n;
}

template <typename Dst, typename Field>
void CopyField(const Field& field, Tensor& t) {
  Dst* out = t.mutable_data<Dst>();
  for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = static_cast<Dst>(field.Get(i));
}

// Number of values the typed field holds for this dtype.
int64_t TypedFieldSize(const onnx::TensorProto& p, DataType type) {
  switch (type) {
    case DataType::kFloat: return p.float_data_size();
    case DataType::kComplex64: return p.float_data_size() / 2;
    case DataType::kDouble: return p.double_data_size();
    case DataType::kComplex128: return p.double_data_size() / 2;
    case DataType::kInt64: return p.int64_data_size();
    case DataType::kUint32:
    case DataType::kUint64: return p.uint64_data_size();
    case DataType::kString: return p.string_data_size();
    default: return p.int32_data_size();
  }
}

}  // namespace

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir) {
  if (!IsValidDataType(proto.data_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", TensorLabel(proto), ": unsupported data_type ", proto.data_type()));
  }
  const DataType type = static_cast<DataType>(proto.data_type());
  Dims dims;
  for (int64_t d : proto.dims()) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), ": negative dimension ", d));
    }
    dims.push_back(d);
  }
  ASSIGN_OR_RETURN(const int64_t n, CheckedElementCount(proto, dims));

  const std::string* raw = nullptr;
  std::string external;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    ASSIGN_OR_RETURN(external, ReadExternalData(proto, base_dir));
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }

  // Sizes are checked before allocating: a shape that overstates its data
  // must cost an error, not the memory it claims.
  if (type == DataType::kString) {
    if (proto.string_data_size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", TensorLabel(proto), ": expected ", n, " strings, found ", proto.string_data_size()));
    }
    Tensor t = Tensor::Allocate(type, dims);
    for (int64_t i = 0; i < n; ++i) t.mutable_data<std::string>()[i] = proto.string_data(i);
    return t;
  }
  if (raw != nullptr) {
    const uint64_t element = ElementSize(type);
    const bool overflows = static_cast<uint64_t>(n) > UINT64_MAX / element;
    if (overflows || raw->size() != static_cast<uint64_t>(n) * element) {
      const std::string expected_bytes =
          overflows ? absl::StrCat(n, " x ", element) : absl::StrCat(static_cast<uint64_t>(n) * element);
      return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), " of type ", DataTypeName(type),
                                                     " and shape ", DimsToString(dims), ": expected ", expected_bytes,
                                                     " bytes of data, found ", raw->size()));
    }
    Tensor t = Tensor::Allocate(type, dims);
    if (!raw->empty()) std::memcpy(t.mutable_raw(), raw->data(), raw->size());
    return t;
  }
  int64_t have = TypedFieldSize(proto, type);
  if (have != n) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", TensorLabel(proto), " of shape ", DimsToString(dims),
                                                   ": expected ", n, " values, found ", have));
  }
  Tensor t = Tensor::Allocate(type, dims);
  switch (type) {
    case DataType::kFloat: CopyField<float>(proto.float_data(), t); break;
    case DataType::kComplex64: std::memcpy(t.mutable_raw(), proto.float_data().data(), t.byte_size()); break;
    case DataType::kDouble: CopyField<double>(proto.double_data(), t); break;
    case DataType::kComplex128: std::memcpy(t.mutable_raw(), proto.double_data().data(), t.byte_size()); break;
    case DataType::kInt64: CopyField<int64_t>(proto.int64_data(), t); break;
    case DataType::kUint32: CopyField<uint32_t>(proto.uint64_data(), t); break;
    case DataType::kUint64: CopyField<uint64_t>(proto.uint64_data(), t); break;
    case DataType::kInt32: CopyField<int32_t>(proto.int32_data(), t); break;
    case DataType::kInt16: CopyField<int16_t>(proto.int32_data(), t); break;
    case DataType::kInt8: CopyField<int8_t>(proto.int32_data(), t); break;
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBFloat16: CopyField<uint16_t>(proto.int32_data(), t); break;
    case DataType::kUint8: CopyField<uint8_t>(proto.int32_data(), t); break;
    case DataType::kBool: CopyField<bool>(proto.int32_data(), t); break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", TensorLabel(proto), ": cannot decode type ", DataTypeName(type)));
  }
  return t;
}

absl::StatusOr<Tensor> TakeTensorFromProto(onnx::TensorProto* proto, const std::string& base_dir) {
  const bool stealable = proto->has_raw_data() && proto->data_location() != onnx::TensorProto::EXTERNAL &&
                         IsValidDataType(proto->data_type()) &&
                         proto->data_type() != static_cast<int32_t>(DataType::kString);
  if (!stealable) return TensorFromProto(*proto, base_dir);
  const DataType type = static_cast<DataType>(proto->data_type());
  Dims dims;
  for (int64_t d : proto->dims()) {
    if (d < 0) return TensorFromProto(*proto, base_dir);  // reports the error
    dims.push_back(d);
  }
  absl::StatusOr<int64_t> n = CheckedElementCount(*proto, dims);
  if (!n.ok() || static_cast<uint64_t>(*n) > UINT64_MAX / ElementSize(type)) return TensorFromProto(*proto, base_dir);
  const uint64_t expected = static_cast<uint64_t>(*n) * ElementSize(type);
  if (proto->raw_data().size() != expected || expected == 0) return TensorFromProto(*proto, base_dir);
  auto owner = std::make_shared<std::string>();
  owner->swap(*proto->mutable_raw_data());
  proto->clear_raw_data();
  void* data = owner->data();
  return Tensor::FromBuffer(type, dims, data, std::shared_ptr<void>(owner, data));
}

onnx::TensorProto TensorToProto(const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(tensor.type()));
  for (int64_t d : tensor.dims()) proto.add_dims(d);
  if (tensor.type() == DataType::kString) {
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      proto.add_string_data(tensor.data<std::string>()[i]);
    }
  } else {
    proto.set_raw_data(tensor.raw(), tensor.byte_size());
  }
  return proto;
}

absl::StatusOr<Value> ValueFromSequenceProto(const onnx::SequenceProto& proto) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return absl::UnimplementedError(
        absl::StrCat("sequence '", proto.name(), "': only sequences of tensors are supported"));
  }
  std::vector<Tensor> elements;
  DataType type = DataType::kUndefined;
  for (const auto& t : proto.tensor_values()) {
    ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(t));
    type = tensor.type();
    elements.push_back(std::move(tensor));
  }
  return Value::Sequence(type, std::move(elements));
}

onnx::SequenceProto ValueToSequenceProto(const Value& value, const std::string& name) {
  onnx::SequenceProto proto;
  proto.set_name(name);
  proto.set_elem_type(onnx::SequenceProto::TENSOR);
  for (const Tensor& t : value.sequence()) *proto.add_tensor_values() = TensorToProto(t, "");
  return proto;
}

absl::StatusOr<Value> ValueFromOptionalProto(const onnx::OptionalProto& proto) {
  switch (proto.elem_type()) {
    case onnx::OptionalProto::TENSOR: {
      ASSIGN_OR_RETURN(Tensor t, TensorFromProto(proto.tensor_value()));
      return Value(std::move(t));
    }
    case onnx::OptionalProto::SEQUENCE: return ValueFromSequenceProto(proto.sequence_value());
    case onnx::OptionalProto::UNDEFINED: return Value();
    default:
      return absl::UnimplementedError(
          absl::StrCat("optional '", proto.name(), "': element type ", proto.elem_type(), " is not supported"));
  }
}

onnx::OptionalProto ValueToOptionalProto(const Value& value, const std::string& name) {
  onnx::OptionalProto proto;
  proto.set_name(name);
  if (value.is_tensor()) {
    proto.set_elem_type(onnx::OptionalProto::TENSOR);
    *proto.mutable_tensor_value() = TensorToProto(value.tensor(), "");
  } else if (value.is_sequence()) {
    proto.set_elem_type(onnx::OptionalProto::SEQUENCE);
    *proto.mutable_sequence_value() = ValueToSequenceProto(value, "");
  } else {
    proto.set_elem_type(onnx::OptionalProto::UNDEFINED);
  }
  return proto;
}

}  // namespace onyx
