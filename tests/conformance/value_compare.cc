#include "tests/conformance/value_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onyx::conformance {
namespace {

bool IsFloating(DataType type) {
  return type == DataType::kFloat || type == DataType::kDouble || type == DataType::kFloat16 ||
         type == DataType::kBFloat16 || type == DataType::kComplex64 || type == DataType::kComplex128;
}

// Number of scalar parts per element: 2 for complex types.
int Parts(DataType type) { return type == DataType::kComplex64 || type == DataType::kComplex128 ? 2 : 1; }

double FloatingPart(const Tensor& t, int64_t index, int part) {
  const int64_t k = index * Parts(t.type()) + part;
  switch (t.type()) {
    case DataType::kFloat:
    case DataType::kComplex64: return t.data<float>()[k];
    case DataType::kDouble:
    case DataType::kComplex128: return t.data<double>()[k];
    case DataType::kFloat16: return HalfToFloat(t.data<uint16_t>()[k]);
    case DataType::kBFloat16: return BFloat16ToFloat(t.data<uint16_t>()[k]);
    default: return 0.0;
  }
}

bool Close(double expected, double actual, const Tolerance& tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return expected == actual;
  return std::fabs(actual - expected) <= tolerance.atol + tolerance.rtol * std::fabs(expected);
}

// The distance between adjacent bfloat16 values at |value| (8 significant
// bits): rtol 1e-3 is finer than the type itself (up to 2^-7 relative), so a
// bfloat16 output is also accepted one step from the expected value, as
// float16 outputs are by rtol alone. The references of onnx 1.12 truncate
// where onyx and ONNX Runtime round to nearest even: one step apart.
double BFloat16Step(double value) {
  if (value == 0) return std::ldexp(1.0, -133);
  return std::ldexp(1.0, std::max(std::ilogb(value), -126) - 7);
}

bool ElementEqual(const Tensor& e, const Tensor& a, int64_t i, const Tolerance& tolerance) {
  const DataType type = e.type();
  if (IsFloating(type)) {
    for (int part = 0; part < Parts(type); ++part) {
      const double expected = FloatingPart(e, i, part), actual = FloatingPart(a, i, part);
      if (Close(expected, actual, tolerance)) continue;
      if (type == DataType::kBFloat16 && std::isfinite(expected) && std::isfinite(actual) &&
          std::fabs(actual - expected) <= BFloat16Step(expected)) {
        continue;
      }
      return false;
    }
    return true;
  }
  switch (type) {
    case DataType::kString: return e.data<std::string>()[i] == a.data<std::string>()[i];
    case DataType::kBool: return (e.data<uint8_t>()[i] != 0) == (a.data<uint8_t>()[i] != 0);
    default: {
      const size_t size = ElementSize(type);
      return std::memcmp(e.data<uint8_t>() + i * size, a.data<uint8_t>() + i * size, size) == 0;
    }
  }
}

std::string FormatDouble(double v, DataType type) {
  char buffer[64];
  const bool wide = type == DataType::kDouble || type == DataType::kComplex128;
  std::snprintf(buffer, sizeof(buffer), wide ? "%.17g" : "%.9g", v);
  return buffer;
}

std::string ElementText(const Tensor& t, int64_t i) {
  const DataType type = t.type();
  if (IsFloating(type)) {
    if (Parts(type) == 1) return FormatDouble(FloatingPart(t, i, 0), type);
    return absl::StrCat("(", FormatDouble(FloatingPart(t, i, 0), type), ",", FormatDouble(FloatingPart(t, i, 1), type),
                        "j)");
  }
  switch (type) {
    case DataType::kString: return absl::StrCat("\"", t.data<std::string>()[i], "\"");
    case DataType::kBool: return t.data<uint8_t>()[i] != 0 ? "true" : "false";
    case DataType::kInt8: return absl::StrCat(t.data<int8_t>()[i]);
    case DataType::kUint8: return absl::StrCat(t.data<uint8_t>()[i]);
    case DataType::kInt16: return absl::StrCat(t.data<int16_t>()[i]);
    case DataType::kUint16: return absl::StrCat(t.data<uint16_t>()[i]);
    case DataType::kInt32: return absl::StrCat(t.data<int32_t>()[i]);
    case DataType::kUint32: return absl::StrCat(t.data<uint32_t>()[i]);
    case DataType::kInt64: return absl::StrCat(t.data<int64_t>()[i]);
    case DataType::kUint64: return absl::StrCat(t.data<uint64_t>()[i]);
    default: return "?";
  }
}

// Row-major multi-index of flat element `i`, e.g. "[1,0,2]".
std::string IndexText(const Dims& dims, int64_t i) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] == 0 ? 0 : i % dims[d];
    i = dims[d] == 0 ? 0 : i / dims[d];
  }
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

const char* KindName(const Value& v) {
  if (v.is_tensor()) return "a tensor";
  if (v.is_sequence()) return "a sequence";
  return "an empty optional";
}

}  // namespace

absl::Status CompareTensors(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance,
                            absl::string_view label) {
  if (expected.type() != actual.type()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": expected element type ", DataTypeName(expected.type()),
                                                   ", got ", DataTypeName(actual.type())));
  }
  if (expected.dims() != actual.dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": expected shape ", DimsToString(expected.dims()), ", got ", DimsToString(actual.dims())));
  }
  int64_t first = -1;
  int64_t differing = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    if (ElementEqual(expected, actual, i, tolerance)) continue;
    if (first < 0) first = i;
    ++differing;
  }
  if (differing == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      label, ": element ", IndexText(expected.dims(), first), " expected ", ElementText(expected, first), ", got ",
      ElementText(actual, first), " (", differing, " of ", expected.num_elements(), " elements differ)"));
}

absl::Status CompareValues(const Value& expected, const Value& actual, const Tolerance& tolerance,
                           absl::string_view label) {
  if (expected.kind() != actual.kind()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": expected ", KindName(expected), ", got ", KindName(actual)));
  }
  if (expected.is_tensor()) return CompareTensors(expected.tensor(), actual.tensor(), tolerance, label);
  if (!expected.is_sequence()) return absl::OkStatus();
  const auto& e = expected.sequence();
  const auto& a = actual.sequence();
  if (e.size() != a.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": expected a sequence of ", e.size(), " tensors, got ", a.size()));
  }
  for (size_t i = 0; i < e.size(); ++i) {
    absl::Status status = CompareTensors(e[i], a[i], tolerance, absl::StrCat(label, " sequence[", i, "]"));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace onyx::conformance
