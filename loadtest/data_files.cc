#include "loadtest/data_files.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "loadtest/status_macros.h"

namespace onyx::load {
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

absl::Status Bad(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
}

// numpy descr -> KServe datatype ("" when unsupported).
std::string DatatypeOfDescr(absl::string_view descr) {
  static const std::pair<const char*, const char*> kMap[] = {
      {"<f4", "FP32"},  {"<f8", "FP64"},  {"<f2", "FP16"},   {"|i1", "INT8"},   {"<i2", "INT16"},  {"<i4", "INT32"},
      {"<i8", "INT64"}, {"|u1", "UINT8"}, {"<u2", "UINT16"}, {"<u4", "UINT32"}, {"<u8", "UINT64"}, {"|b1", "BOOL"},
  };
  for (const auto& [d, dt] : kMap) {
    if (descr == d) return dt;
  }
  return "";
}

// The value after 'key': in a numpy header dict.
absl::string_view HeaderValue(absl::string_view header, absl::string_view key) {
  const size_t at = header.find(absl::StrCat("'", key, "':"));
  if (at == absl::string_view::npos) return {};
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(header.substr(at + key.size() + 3));
  if (rest.empty()) return {};
  const char open = rest[0];
  const char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  const size_t end = rest.find(close, open == '(' || open == '\'' ? 1 : 0);
  if (end == absl::string_view::npos) return {};
  return open == '(' || open == '\'' ? rest.substr(1, end - 1) : rest.substr(0, end);
}

// ONNX TensorProto.DataType -> KServe datatype.
std::string DatatypeOfOnnx(int t) {
  switch (t) {
    case 1: return "FP32";
    case 2: return "UINT8";
    case 3: return "INT8";
    case 4: return "UINT16";
    case 5: return "INT16";
    case 6: return "INT32";
    case 7: return "INT64";
    case 8: return "BYTES";
    case 9: return "BOOL";
    case 10: return "FP16";
    case 11: return "FP64";
    case 12: return "UINT32";
    case 13: return "UINT64";
    case 16: return "BF16";
    default: return "";
  }
}

// Flattens nested JSON arrays of numbers or strings.
absl::Status Flatten(const google::protobuf::Value& v, std::vector<double>* numbers,
                     std::vector<std::string>* strings) {
  switch (v.kind_case()) {
    case google::protobuf::Value::kNumberValue: numbers->push_back(v.number_value()); return absl::OkStatus();
    case google::protobuf::Value::kBoolValue: numbers->push_back(v.bool_value() ? 1 : 0); return absl::OkStatus();
    case google::protobuf::Value::kStringValue: strings->push_back(v.string_value()); return absl::OkStatus();
    case google::protobuf::Value::kListValue:
      for (const auto& item : v.list_value().values()) RETURN_IF_ERROR(Flatten(item, numbers, strings));
      return absl::OkStatus();
    default: return absl::InvalidArgumentError("expected numbers, booleans or strings");
  }
}

absl::StatusOr<TensorValue> TensorFromJson(const std::string& path, const TensorSpec& spec,
                                           const google::protobuf::Value& v) {
  TensorValue t{spec.name, spec.datatype, spec.shape, {}};
  const google::protobuf::Value* content = &v;
  if (v.kind_case() == google::protobuf::Value::kStructValue) {
    const auto& fields = v.struct_value().fields();
    if (auto shape = fields.find("shape"); shape != fields.end()) {
      t.shape.clear();
      for (const auto& d : shape->second.list_value().values())
        t.shape.push_back(static_cast<int64_t>(d.number_value()));
    }
    if (auto b64 = fields.find("b64"); b64 != fields.end()) {
      if (!absl::Base64Unescape(b64->second.string_value(), &t.raw)) {
        return Bad(path, absl::StrCat("tensor '", spec.name, "': b64 is not base64"));
      }
      const int size = DatatypeSize(t.datatype);
      if (size > 0 && static_cast<int64_t>(t.raw.size()) != ElementCount(t.shape) * size) {
        return Bad(path, absl::StrCat("tensor '", spec.name, "': b64 holds ", t.raw.size(), " bytes, its shape needs ",
                                      ElementCount(t.shape) * size));
      }
      return t;
    }
    auto c = fields.find("content");
    if (c == fields.end()) return Bad(path, absl::StrCat("tensor '", spec.name, "': expected content or b64"));
    content = &c->second;
  }
  std::vector<double> numbers;
  std::vector<std::string> strings;
  if (absl::Status s = Flatten(*content, &numbers, &strings); !s.ok()) {
    return Bad(path, absl::StrCat("tensor '", spec.name, "': ", s.message()));
  }
  absl::Status s = strings.empty() ? FillFromNumbers(numbers, &t) : FillFromStrings(strings, &t);
  if (!s.ok()) return Bad(path, s.message());
  return t;
}

absl::StatusOr<std::vector<TensorSet>> ReadEntries(const std::string& path, const google::protobuf::Value& list,
                                                   const std::vector<TensorSpec>& specs, bool all_required) {
  std::vector<TensorSet> out;
  for (const auto& entry : list.list_value().values()) {
    if (entry.kind_case() != google::protobuf::Value::kStructValue) return Bad(path, "each entry must be an object");
    TensorSet set;
    for (const TensorSpec& spec : specs) {
      auto f = entry.struct_value().fields().find(spec.name);
      if (f == entry.struct_value().fields().end()) {
        if (all_required) return Bad(path, absl::StrCat("entry ", out.size(), " lacks input '", spec.name, "'"));
        continue;
      }
      ASSIGN_OR_RETURN(TensorValue t, TensorFromJson(path, spec, f->second));
      set.emplace(spec.name, std::move(t));
    }
    out.push_back(std::move(set));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::StatusOr<TensorValue> ReadNpy(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return Bad(path, "not a .npy file (no magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, at = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    at = 10;
  } else {
    if (bytes.size() < 12) return Bad(path, "truncated header");
    uint32_t len;
    std::memcpy(&len, bytes.data() + 8, 4);
    header_len = len;
    at = 12;
  }
  if (at + header_len > bytes.size()) return Bad(path, "truncated header");
  const absl::string_view header(bytes.data() + at, header_len);
  TensorValue t;
  const absl::string_view descr = HeaderValue(header, "descr");
  if (HeaderValue(header, "fortran_order") != "False")
    return Bad(path, "Fortran order is not supported (save C order)");
  const bool strings = absl::StartsWith(descr, "|S");
  int64_t width = 0;
  if (strings) {
    if (!absl::SimpleAtoi(descr.substr(2), &width) || width <= 0)
      return Bad(path, absl::StrCat("bad descr '", descr, "'"));
    t.datatype = "BYTES";
  } else {
    t.datatype = DatatypeOfDescr(descr);
    if (t.datatype.empty()) {
      return Bad(path, absl::StrCat("dtype '", descr, "' is not supported (little-endian numbers, bool or |S bytes)"));
    }
  }
  for (absl::string_view d : absl::StrSplit(HeaderValue(header, "shape"), ',', absl::SkipWhitespace())) {
    int64_t dim = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(d), &dim) || dim < 0) return Bad(path, "bad shape");
    t.shape.push_back(dim);
  }
  const absl::string_view data(bytes.data() + at + header_len, bytes.size() - at - header_len);
  const int64_t n = ElementCount(t.shape);
  if (strings) {
    if (static_cast<int64_t>(data.size()) != n * width) return Bad(path, "data size does not match the shape");
    std::vector<std::string> values;
    for (int64_t i = 0; i < n; ++i) {
      absl::string_view s = data.substr(i * width, width);
      values.emplace_back(s.substr(0, s.find('\0')));
    }
    RETURN_IF_ERROR(FillFromStrings(values, &t));
    return t;
  }
  if (static_cast<int64_t>(data.size()) != n * DatatypeSize(t.datatype)) {
    return Bad(path,
               absl::StrCat("holds ", data.size(), " data bytes, its shape needs ", n * DatatypeSize(t.datatype)));
  }
  t.raw = std::string(data);
  return t;
}

absl::StatusOr<TensorValue> ReadTensorProto(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  TensorValue t;
  int onnx_type = 0;
  std::vector<uint64_t> ints;  // int32_data / int64_data / uint64_data, by field
  std::vector<float> floats;
  std::vector<double> doubles;
  std::vector<std::string> strings;
  bool has_raw = false;
  using WF = google::protobuf::internal::WireFormatLite;
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    const int field = static_cast<int>(tag >> 3);
    const auto wire = static_cast<WF::WireType>(tag & 7);
    const auto read_varints = [&](std::vector<uint64_t>* out) {
      if (wire == WF::WIRETYPE_LENGTH_DELIMITED) {
        uint32_t len;
        if (!in.ReadVarint32(&len)) return false;
        const auto limit = in.PushLimit(static_cast<int>(len));
        uint64_t v;
        while (in.BytesUntilLimit() > 0 && in.ReadVarint64(&v)) out->push_back(v);
        in.PopLimit(limit);
        return true;
      }
      uint64_t v;
      if (!in.ReadVarint64(&v)) return false;
      out->push_back(v);
      return true;
    };
    bool ok = true;
    std::vector<uint64_t> dims_or_ints;
    switch (field) {
      case 1:
        ok = read_varints(&dims_or_ints);
        for (uint64_t d : dims_or_ints) t.shape.push_back(static_cast<int64_t>(d));
        break;
      case 2: {
        uint64_t v;
        ok = in.ReadVarint64(&v);
        onnx_type = static_cast<int>(v);
        break;
      }
      case 4:
      case 10: {
        uint32_t len;
        ok = in.ReadVarint32(&len);
        std::string buf;
        ok = ok && in.ReadString(&buf, static_cast<int>(len));
        for (size_t i = 0; field == 4 && i + 4 <= buf.size(); i += 4)
          floats.push_back(std::bit_cast<float>(*reinterpret_cast<const uint32_t*>(buf.data() + i)));
        for (size_t i = 0; field == 10 && i + 8 <= buf.size(); i += 8)
          doubles.push_back(std::bit_cast<double>(*reinterpret_cast<const uint64_t*>(buf.data() + i)));
        break;
      }
      case 5:
      case 7:
      case 11: ok = read_varints(&ints); break;
      case 6:
      case 8:
      case 9: {
        uint32_t len;
        std::string s;
        ok = in.ReadVarint32(&len) && in.ReadString(&s, static_cast<int>(len));
        if (field == 6) strings.push_back(std::move(s));
        if (field == 8) t.name = std::move(s);
        if (field == 9) {
          t.raw = std::move(s);
          has_raw = true;
        }
        break;
      }
      case 13: return Bad(path, "external data is not supported; save the tensor with its data inside");
      default: ok = WF::SkipField(&in, tag);
    }
    if (!ok) return Bad(path, absl::StrCat("malformed TensorProto (field ", field, ")"));
  }
  t.datatype = DatatypeOfOnnx(onnx_type);
  if (t.datatype.empty()) return Bad(path, absl::StrCat("TensorProto data_type ", onnx_type, " is not supported"));
  const int64_t n = ElementCount(t.shape);
  if (t.datatype == "BYTES") {
    RETURN_IF_ERROR(FillFromStrings(strings, &t));
    return t;
  }
  if (!has_raw) {
    std::vector<double> values;
    if (t.datatype == "FP32") values.assign(floats.begin(), floats.end());
    else if (t.datatype == "FP64") values = doubles;
    else if (t.datatype == "FP16" || t.datatype == "BF16") {
      // int32_data carries the 16-bit patterns; keep the bits as they are.
      t.raw.resize(n * 2);
      if (static_cast<int64_t>(ints.size()) != n) return Bad(path, "element count does not match the dims");
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t bits = static_cast<uint16_t>(ints[i]);
        std::memcpy(t.raw.data() + 2 * i, &bits, 2);
      }
      return t;
    } else {
      for (uint64_t v : ints) {
        values.push_back(t.datatype == "UINT64" ? static_cast<double>(v)
                                                : static_cast<double>(static_cast<int64_t>(v)));
      }
    }
    absl::Status s = FillFromNumbers(values, &t);
    if (!s.ok()) return Bad(path, s.message());
    return t;
  }
  if (static_cast<int64_t>(t.raw.size()) != n * DatatypeSize(t.datatype)) {
    return Bad(path, absl::StrCat("raw_data holds ", t.raw.size(), " bytes, dims need ", n * DatatypeSize(t.datatype)));
  }
  return t;
}

absl::StatusOr<std::optional<TensorValue>> ReadTensorFromDir(const std::string& dir, const std::string& name) {
  for (const char* ext : {".npy", ".pb"}) {
    const std::string path = absl::StrCat(dir, "/", name, ext);
    if (!Exists(path)) continue;
    absl::StatusOr<TensorValue> t = std::string(ext) == ".npy" ? ReadNpy(path) : ReadTensorProto(path);
    if (!t.ok()) return t.status();
    t->name = name;
    return std::optional<TensorValue>(std::move(*t));
  }
  return std::optional<TensorValue>();
}

absl::StatusOr<DataSet> ReadPerfAnalyzerJson(const std::string& path, const std::vector<TensorSpec>& inputs,
                                             const std::vector<TensorSpec>& outputs) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  google::protobuf::Struct root;
  if (auto s = google::protobuf::util::JsonStringToMessage(text, &root); !s.ok()) {
    return Bad(path, absl::StrCat("not JSON: ", s.message().as_string()));
  }
  const auto& fields = root.fields();
  auto data = fields.find("data");
  if (data == fields.end() || data->second.kind_case() != google::protobuf::Value::kListValue ||
      data->second.list_value().values().empty()) {
    return Bad(path, "expected a non-empty \"data\" array (perf_analyzer's input-data format)");
  }
  DataSet set;
  ASSIGN_OR_RETURN(set.inputs, ReadEntries(path, data->second, inputs, true));
  if (auto v = fields.find("validation_data"); v != fields.end()) {
    ASSIGN_OR_RETURN(set.expected, ReadEntries(path, v->second, outputs, false));
    if (set.expected.size() != set.inputs.size()) {
      return Bad(path, absl::StrCat("\"validation_data\" has ", set.expected.size(), " entries, \"data\" has ",
                                    set.inputs.size()));
    }
  }
  return set;
}

}  // namespace onyx::load
