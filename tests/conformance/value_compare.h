// Comparing an engine output with the expected value of an ONNX backend test.
//
//   absl::Status match = CompareValues(expected, actual, Tolerance(), "output 0 'y'");
//   if (!match.ok()) std::cout << match.message();  // "output 0 'y': element [1,2] ..."
//
// The rules of onnx.backend.test.runner: floating types (float, double, float16,
// bfloat16, and the parts of complex values) must satisfy
// |actual - expected| <= atol + rtol * |expected|, NaN equals NaN and infinities
// must be equal; integers, bools and strings must be equal exactly; element types
// and shapes must be equal; sequences are compared element by element.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "onyx/tensor.h"

namespace onyx::conformance {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// OK when `actual` matches `expected`; otherwise INVALID_ARGUMENT whose one-line
// message starts with `label` and names the first difference (kind, element type,
// shape, or the first differing element with expected vs actual and the count of
// differing elements).
absl::Status CompareValues(const Value& expected, const Value& actual, const Tolerance& tolerance,
                           absl::string_view label);

// Same for two tensors.
absl::Status CompareTensors(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance,
                            absl::string_view label);

}  // namespace onyx::conformance
