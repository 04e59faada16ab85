// What every oneDNN-backed kernel shares: the process's CPU engine, a stream
// per calling thread, and the conversion of oneDNN's exceptions to Status.
#pragma once

#include <cstdint>
#include <exception>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace onyx {

// One engine for the process (oneDNN engines are thread-safe).
dnnl::engine& DnnlCpuEngine();

// The calling thread's in-order stream on that engine.
dnnl::stream& DnnlThreadStream();

// y[i] = f(x[i]) for i < n by oneDNN's element-wise primitive `algorithm`
// with its `alpha` and `beta` (x == y allowed), on the calling thread's
// intra-op thread count. oneDNN's primitive cache makes the per-call creation
// a lookup after the first call of a size.
absl::Status DnnlEltwise(dnnl::algorithm algorithm, float alpha, float beta, const float* x, float* y, int64_t n);

// Layer normalization of `rows` rows of `len` floats: y = (x - mean) /
// sqrt(var + epsilon) * scale + shift (shift may be nullptr), by oneDNN's
// primitive on the calling thread's intra-op thread count.
absl::Status DnnlLayerNormalization(const float* x, int64_t rows, int64_t len, float epsilon, const float* scale,
                                    const float* shift, float* y);

// Runs `fn` (returning Status), turning a oneDNN exception into UNIMPLEMENTED
// when the library has no implementation of `what`, else INTERNAL.
template <typename Fn>
absl::Status DnnlGuarded(const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) {
      return absl::UnimplementedError(absl::StrCat("oneDNN has no ", what, ": ", e.what()));
    }
    return absl::InternalError(absl::StrCat("oneDNN ", what, " failed: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("oneDNN ", what, " failed: ", e.what()));
  }
}

}  // namespace onyx
