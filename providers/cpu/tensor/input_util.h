// Input checks shared by the tensor kernels.
#pragma once

#include "absl/strings/str_cat.h"
#include "framework/op_kernel.h"

namespace onyx {

// INVALID_ARGUMENT naming the first of inputs [0, n) that is omitted or is not
// a tensor; call first in Compute so that later code may dereference them.
inline absl::Status CheckTensorInputs(const OpKernelContext& ctx, int n) {
  for (int i = 0; i < n; ++i) {
    if (ctx.Input(i) == nullptr) return ctx.Error(absl::StrCat("input ", i, " is missing or is not a tensor"));
  }
  return absl::OkStatus();
}

// INVALID_ARGUMENT when an output shape computed from input values has a
// negative dimension or more than 2^48 elements (an overflow or a request no
// machine can hold); call before ctx.Output for data-dependent shapes.
inline absl::Status CheckOutputDims(const OpKernelContext& ctx, absl::Span<const int64_t> dims) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error(absl::StrCat("output shape ", DimsToString(dims), " has a negative dimension"));
    overflow |= __builtin_mul_overflow(n, d, &n);
  }
  if (overflow || n > (int64_t{1} << 48)) {
    return ctx.Error(absl::StrCat("output shape ", DimsToString(dims), " is too large"));
  }
  return absl::OkStatus();
}

}  // namespace onyx
