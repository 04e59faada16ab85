// Element type conversion shared by Cast/CastLike and by kernels that must
// produce a value of a run-time element type (EyeLike, OneHot, ConstantOfShape).
#pragma once

#include "absl/status/statusor.h"
#include "onyx/tensor.h"

namespace onyx {

// Converts every element of `src` into `dst`, which must have the same element
// count (types may differ). Numbers follow C++ conversions, except that float
// -> float16 and float -> bfloat16 round to nearest even (NaN stays NaN, out of
// range becomes +/-inf), as ONNX's Cast specifies for float-to-float; strings
// are parsed and formatted like numpy ("0.47892547", "1e-05", "nan", "inf"; "INF"/"+INF"/"NaN" parse).
// INVALID_ARGUMENT naming the string when a string is not a number;
// UNIMPLEMENTED for complex types.
absl::Status CastElements(const Tensor& src, Tensor& dst);

// A scalar tensor of `type` holding `value` converted like CastElements.
absl::StatusOr<Tensor> ScalarOf(DataType type, double value);

}  // namespace onyx
