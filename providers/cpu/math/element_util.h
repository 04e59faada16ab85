// Helpers shared by the CPU math and nn kernels: required-input checks, type
// lists for dispatch, and float16/bfloat16 handling through float.
//
//   ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
//   if (IsHalfLike(x->type())) {
//     Tensor xf = UpcastToFloat(*x);
//     Tensor yf = Tensor::Allocate(DataType::kFloat, y->dims());
//     ... compute in float ...
//     DowncastFromFloat(yf, *y);
//   }
#pragma once

#include <cstdint>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/op_kernel.h"
#include "onyx/tensor.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {

// Input i as a tensor, or INVALID_ARGUMENT naming `name` when it is omitted or
// is not a tensor.
absl::StatusOr<const Tensor*> RequireInput(const OpKernelContext& ctx, int i, absl::string_view name);

// Inputs 0 and 1 of a binary element-wise op: both present, of one element
// type, and their numpy-broadcast shape. Errors name the inputs and shapes.
struct BinaryOperands {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  Dims dims;
};
absl::StatusOr<BinaryOperands> SameTypeOperands(const OpKernelContext& ctx, absl::string_view a_name,
                                                absl::string_view b_name);

inline bool IsHalfLike(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

// A float copy of a float16/bfloat16 tensor; any other tensor is returned as is
// (a shallow copy sharing its buffer).
Tensor UpcastToFloat(const Tensor& t);
// Writes float tensor `src` into `dst` (float16, bfloat16 or float) of the same
// element count, rounding to nearest even.
void DowncastFromFloat(const Tensor& src, Tensor& dst);
// Copies any numeric or bool tensor into a new tensor of type `to` (static_cast
// semantics; float16/bfloat16 through float). UNIMPLEMENTED for strings.
absl::StatusOr<Tensor> ConvertNumeric(const Tensor& t, DataType to);

// Reads element i of a scalar-like numeric tensor as double (any numeric type).
double ScalarAsDouble(const Tensor& t, int64_t i = 0);
// Reads element i of an integer tensor (int8..uint64) as int64.
int64_t ScalarAsInt64(const Tensor& t, int64_t i = 0);

// Resolves a possibly negative axis for `rank`; INVALID_ARGUMENT naming the
// accepted range otherwise.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

template <typename... Ts>
struct TypeList {};

template <typename... Ts, typename Fn>
absl::Status DispatchList(TypeList<Ts...>, DataType type, Fn&& fn) {
  return DispatchTypes<Ts...>(type, std::forward<Fn>(fn));
}

using FloatCompute = TypeList<float, double>;
using SignedCompute = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
using NumericCompute =
    TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

}  // namespace onyx
