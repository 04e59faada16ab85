#include "onyx/value_io.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "graph/tensor_proto.h"

namespace onyx {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

template <typename Message>
absl::StatusOr<Message> Parse(const std::string& path) {
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  Message message;
  if (!message.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a valid ", Message().GetTypeName()));
  }
  return message;
}

absl::Status Annotate(const absl::Status& status, const std::string& path) {
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Value> ReadValueFile(const std::string& path, ValueInfo::Kind kind) {
  switch (kind) {
    case ValueInfo::Kind::kTensor: {
      auto proto = Parse<onnx::TensorProto>(path);
      if (!proto.ok()) return proto.status();
      auto t = TensorFromProto(*proto);
      if (!t.ok()) return Annotate(t.status(), path);
      return Value(*std::move(t));
    }
    case ValueInfo::Kind::kSequence: {
      auto proto = Parse<onnx::SequenceProto>(path);
      if (!proto.ok()) return proto.status();
      auto v = ValueFromSequenceProto(*proto);
      if (!v.ok()) return Annotate(v.status(), path);
      return v;
    }
    case ValueInfo::Kind::kOptional: {
      auto proto = Parse<onnx::OptionalProto>(path);
      if (!proto.ok()) return proto.status();
      auto v = ValueFromOptionalProto(*proto);
      if (!v.ok()) return Annotate(v.status(), path);
      return v;
    }
  }
  return absl::InvalidArgumentError("unknown value kind");
}

absl::Status WriteValueFile(const std::string& path, const Value& value, ValueInfo::Kind kind,
                            const std::string& name) {
  std::string bytes;
  if (kind == ValueInfo::Kind::kOptional) {
    bytes = ValueToOptionalProto(value, name).SerializeAsString();
  } else if (value.is_sequence()) {
    bytes = ValueToSequenceProto(value, name).SerializeAsString();
  } else if (value.is_tensor()) {
    bytes = TensorToProto(value.tensor(), name).SerializeAsString();
  } else {
    return absl::InvalidArgumentError(absl::StrCat("output '", name, "' is empty and not optional"));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(bytes.data(), bytes.size())) {
    return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace onyx
