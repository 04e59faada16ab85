#include "loadtest/tensor.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onyx::load {
namespace {

template <typename T>
void Put(std::string* raw, size_t i, T v) {
  std::memcpy(raw->data() + i * sizeof(T), &v, sizeof(T));
}
template <typename T>
T Get(absl::string_view raw, size_t i) {
  T v;
  std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
  return v;
}

// Element i of `raw` as a double, for any numeric datatype.
double ElementAsDouble(absl::string_view dt, absl::string_view raw, size_t i) {
  if (dt == "FP32") return Get<float>(raw, i);
  if (dt == "FP64") return Get<double>(raw, i);
  if (dt == "FP16") return HalfToFloat(Get<uint16_t>(raw, i));
  if (dt == "BF16") return std::bit_cast<float>(static_cast<uint32_t>(Get<uint16_t>(raw, i)) << 16);
  if (dt == "INT8") return Get<int8_t>(raw, i);
  if (dt == "INT16") return Get<int16_t>(raw, i);
  if (dt == "INT32") return Get<int32_t>(raw, i);
  if (dt == "INT64") return static_cast<double>(Get<int64_t>(raw, i));
  if (dt == "UINT8" || dt == "BOOL") return Get<uint8_t>(raw, i);
  if (dt == "UINT16") return Get<uint16_t>(raw, i);
  if (dt == "UINT32") return Get<uint32_t>(raw, i);
  if (dt == "UINT64") return static_cast<double>(Get<uint64_t>(raw, i));
  return 0;
}

void SetElement(absl::string_view dt, std::string* raw, size_t i, double v) {
  if (dt == "FP32") return Put<float>(raw, i, static_cast<float>(v));
  if (dt == "FP64") return Put<double>(raw, i, v);
  if (dt == "FP16") return Put<uint16_t>(raw, i, FloatToHalf(static_cast<float>(v)));
  if (dt == "BF16") {
    // Round to nearest even on the dropped 16 bits.
    const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(v));
    return Put<uint16_t>(raw, i, static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16));
  }
  if (dt == "INT8") return Put<int8_t>(raw, i, static_cast<int8_t>(v));
  if (dt == "INT16") return Put<int16_t>(raw, i, static_cast<int16_t>(v));
  if (dt == "INT32") return Put<int32_t>(raw, i, static_cast<int32_t>(v));
  if (dt == "INT64") return Put<int64_t>(raw, i, static_cast<int64_t>(v));
  if (dt == "BOOL") return Put<uint8_t>(raw, i, v != 0 ? 1 : 0);
  if (dt == "UINT8") return Put<uint8_t>(raw, i, static_cast<uint8_t>(v));
  if (dt == "UINT16") return Put<uint16_t>(raw, i, static_cast<uint16_t>(v));
  if (dt == "UINT32") return Put<uint32_t>(raw, i, static_cast<uint32_t>(v));
  if (dt == "UINT64") return Put<uint64_t>(raw, i, static_cast<uint64_t>(v));
}

bool IsFloat(absl::string_view dt) { return dt == "FP32" || dt == "FP64" || dt == "FP16" || dt == "BF16"; }

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ","), "]"); }

}  // namespace

int DatatypeSize(absl::string_view dt) {
  if (dt == "BOOL" || dt == "UINT8" || dt == "INT8") return 1;
  if (dt == "UINT16" || dt == "INT16" || dt == "FP16" || dt == "BF16") return 2;
  if (dt == "UINT32" || dt == "INT32" || dt == "FP32") return 4;
  if (dt == "UINT64" || dt == "INT64" || dt == "FP64") return 8;
  if (dt == "BYTES") return 0;
  return -1;
}

int64_t ElementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<TensorValue> MakeTensor(std::string name, std::string datatype, std::vector<int64_t> shape, Fill fill,
                                       std::mt19937_64* rng) {
  const int size = DatatypeSize(datatype);
  if (size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': datatype '", datatype,
                                                   "' is not a KServe v2 datatype onyx-load can generate"));
  }
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "': shape ", ShapeText(shape),
                                                     " has a variable dimension; set it with --shape ", name,
                                                     "=D1,D2,... or --batch"));
    }
  }
  TensorValue t{std::move(name), std::move(datatype), std::move(shape), {}};
  const int64_t n = ElementCount(t.shape);
  if (size == 0) {
    std::uniform_int_distribution<int> ch('a', 'z');
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t len = 8;
      t.raw.append(reinterpret_cast<const char*>(&len), 4);
      for (uint32_t k = 0; k < len; ++k) t.raw.push_back(fill == Fill::kZeros ? 'a' : static_cast<char>(ch(*rng)));
    }
    return t;
  }
  t.raw.assign(static_cast<size_t>(n) * size, '\0');
  if (fill == Fill::kZeros) return t;
  std::uniform_real_distribution<double> real(-1, 1);
  std::uniform_int_distribution<int> small(0, 7), bit(0, 1);
  for (int64_t i = 0; i < n; ++i) {
    const double v = IsFloat(t.datatype) ? real(*rng) : t.datatype == "BOOL" ? bit(*rng) : small(*rng);
    SetElement(t.datatype, &t.raw, static_cast<size_t>(i), v);
  }
  return t;
}

absl::Status FillFromNumbers(const std::vector<double>& values, TensorValue* t) {
  const int size = DatatypeSize(t->datatype);
  if (size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t->name, "': numbers given for datatype ", t->datatype, " (expected strings)"));
  }
  if (static_cast<int64_t>(values.size()) != ElementCount(t->shape)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", t->name, "': shape ", ShapeText(t->shape), " needs ",
                                                   ElementCount(t->shape), " values, got ", values.size()));
  }
  t->raw.assign(values.size() * size, '\0');
  for (size_t i = 0; i < values.size(); ++i) SetElement(t->datatype, &t->raw, i, values[i]);
  return absl::OkStatus();
}

absl::Status FillFromStrings(const std::vector<std::string>& values, TensorValue* t) {
  if (t->datatype != "BYTES") {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t->name, "': strings given for datatype ", t->datatype, " (expected numbers)"));
  }
  if (static_cast<int64_t>(values.size()) != ElementCount(t->shape)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", t->name, "': shape ", ShapeText(t->shape), " needs ",
                                                   ElementCount(t->shape), " strings, got ", values.size()));
  }
  t->raw.clear();
  for (const std::string& s : values) {
    const uint32_t len = static_cast<uint32_t>(s.size());
    t->raw.append(reinterpret_cast<const char*>(&len), 4);
    t->raw.append(s);
  }
  return absl::OkStatus();
}

absl::StatusOr<inference::InferTensorContents> TypedContents(const TensorValue& t) {
  inference::InferTensorContents c;
  const std::string& dt = t.datatype;
  const int size = DatatypeSize(dt);
  if (dt == "FP16" || dt == "BF16" || size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", t.name, "': datatype ", dt, " has no typed contents; use --encoding raw"));
  }
  if (size == 0) {
    for (size_t at = 0; at + 4 <= t.raw.size();) {
      uint32_t len;
      std::memcpy(&len, t.raw.data() + at, 4);
      c.add_bytes_contents(t.raw.substr(at + 4, len));
      at += 4 + len;
    }
    return c;
  }
  const size_t n = t.raw.size() / size;
  for (size_t i = 0; i < n; ++i) {
    const double v = ElementAsDouble(dt, t.raw, i);
    if (dt == "BOOL") c.add_bool_contents(v != 0);
    else if (dt == "FP32") c.add_fp32_contents(Get<float>(t.raw, i));
    else if (dt == "FP64") c.add_fp64_contents(Get<double>(t.raw, i));
    else if (dt == "INT64") c.add_int64_contents(Get<int64_t>(t.raw, i));
    else if (dt == "UINT64") c.add_uint64_contents(Get<uint64_t>(t.raw, i));
    else if (dt == "INT8" || dt == "INT16" || dt == "INT32") c.add_int_contents(static_cast<int32_t>(v));
    else c.add_uint_contents(static_cast<uint32_t>(v));
  }
  return c;
}

std::string CompareOutput(const TensorValue& want, absl::string_view datatype, const std::vector<int64_t>& shape,
                          absl::string_view raw) {
  if (datatype != want.datatype || shape != want.shape) {
    return absl::StrCat("output '", want.name, "': expected ", want.datatype, " ", ShapeText(want.shape), ", received ",
                        datatype, " ", ShapeText(shape));
  }
  if (!IsFloat(datatype)) {
    if (raw == want.raw) return "";
    return absl::StrCat("output '", want.name, "': ", raw.size(), " bytes differ from the expected ", want.raw.size());
  }
  const size_t size = DatatypeSize(datatype);
  if (raw.size() != want.raw.size()) {
    return absl::StrCat("output '", want.name, "': expected ", want.raw.size(), " bytes, received ", raw.size());
  }
  for (size_t i = 0; i < raw.size() / size; ++i) {
    const double a = ElementAsDouble(datatype, raw, i), b = ElementAsDouble(datatype, want.raw, i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (!(std::abs(a - b) <= 1e-5 + 1e-3 * std::abs(b))) {
      return absl::StrCat("output '", want.name, "' element ", i, ": expected ", b, ", received ", a);
    }
  }
  return "";
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: still correct
  return static_cast<uint16_t>(half);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) return std::ldexp(static_cast<float>(mant), -24) * (sign ? -1.0f : 1.0f);
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace onyx::load
