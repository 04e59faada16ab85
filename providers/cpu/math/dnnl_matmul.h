// DnnlMatMul: y[M, N] = act(a[M, K] x b[K, N] + bias[N]) for a constant b
// (MatMul, FusedMatMul and Gemm with a constant B),
// by oneDNN's matmul primitive. b is reordered once into the layout the
// primitive prefers (format_tag::any) and kept, shared by every row count
// and every session (packed_weights.h) whose primitive wants the same layout; the bias and the activation run
// inside the primitive. Primitives are compiled per (rows, intra-op
// threads), at most kMaxCompiled of them cached; further row counts compile
// on every call.
//
//   ASSIGN_OR_RETURN(auto mm, DnnlMatMul::Create(b, &bias, DnnlMatMul::Activation::kGelu));
//   RETURN_IF_ERROR(mm->Run(a, rows, y));
//
// Thread-safe: Run may be called concurrently; each call has its own scratch.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "onyx/tensor.h"

namespace onyx {

class DnnlMatMul {
 public:
  enum class Activation { kNone, kRelu, kGelu };
  // A fused node's `activation` attribute: "" (none), "Relu" or "Gelu";
  // INVALID_ARGUMENT naming the value otherwise.
  static absl::StatusOr<Activation> ParseActivation(const std::string& name);
  // Applies `activation` to y[0, n) in place (the paths that run outside a
  // primitive): Relu, or GELU by oneDNN's eltwise, the post-op's formula.
  static absl::Status ApplyActivation(Activation activation, float* y, int64_t n);
  static constexpr size_t kMaxCompiled = 64;

  // `b` is float [K, N] (or [N, K] with b_transposed: Gemm's transB) and
  // `bias` float [N] or nullptr; both are kept by reference count.
  // INVALID_ARGUMENT for other shapes or types.
  static absl::StatusOr<std::unique_ptr<DnnlMatMul>> Create(const Tensor& b, const Tensor* bias, Activation activation,
                                                            bool b_transposed = false);
  ~DnnlMatMul();

  // a: rows x K floats, row-major; y: rows x N floats.
  absl::Status Run(const float* a, int64_t rows, float* y) const;

  int64_t k() const { return b_.dims()[b_transposed_ ? 1 : 0]; }
  int64_t n() const { return b_.dims()[b_transposed_ ? 0 : 1]; }

  struct Compiled;

 private:
  DnnlMatMul(const Tensor& b, const Tensor* bias, Activation activation, bool b_transposed);
  absl::StatusOr<std::shared_ptr<const Compiled>> CompiledFor(int64_t rows) const;

  Tensor b_;
  Tensor bias_;
  Activation activation_;
  bool b_transposed_;
  mutable absl::Mutex mu_;
  mutable std::map<std::pair<int64_t, int>, std::shared_ptr<const Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx
