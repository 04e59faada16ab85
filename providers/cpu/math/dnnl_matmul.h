// DnnlMatMul: y[M, N] = act(a[M, K] x b[K, N] + bias[N]) for a constant b
// (MatMul, FusedMatMul and Gemm with a constant B),
// by oneDNN's matmul primitive. b is reordered at creation into the layout
// the primitive for `rows_hint` rows prefers (format_tag::any); only that
// packed copy is kept, not b itself, so the session may release b
// (OpKernel::PackedConstantInputs). A row count whose primitive wants
// another layout reorders the packed copy; every copy is shared by the
// kernels and sessions that want the same layout of the same b
// (packed_weights.h). The bias and the activation run inside the
// primitive. Primitives are compiled per (rows, intra-op threads), at most
// kMaxCompiled of them cached; further row counts compile on every call.
//
//   ASSIGN_OR_RETURN(auto mm, DnnlMatMul::Create(b, &bias, DnnlMatMul::Activation::kGelu));
//   RETURN_IF_ERROR(mm->Run(a, rows, y));
//
// Thread-safe: Run may be called concurrently; each call has its own scratch.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/tensor.h"
#include "onyx/value_info.h"
#include "providers/cpu/nn/packed_weights.h"

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
  // `bias` float [N] or nullptr (kept by reference count); `rows_hint` is
  // the row count expected at run time (0: unknown). INVALID_ARGUMENT for
  // other shapes or types.
  static absl::StatusOr<std::unique_ptr<DnnlMatMul>> Create(const Tensor& b, const Tensor* bias, Activation activation,
                                                            bool b_transposed = false, int64_t rows_hint = 0);
  // The rows of A [..., K] (the product of its leading dims) when the graph
  // knows them all, else 0: a kernel's rows_hint.
  static int64_t RowsHint(const ValueInfo* a);
  ~DnnlMatMul();

  // a: rows x K floats, row-major; y: rows x N floats.
  absl::Status Run(const float* a, int64_t rows, float* y) const;

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // b as it was given (same dims and layout), rebuilt from the packed copy:
  // for the rare paths that multiply without this primitive after the
  // session released b.
  absl::StatusOr<Tensor> PlainB() const;
  // `b` as Compute received it when its bytes are there, else PlainB().
  absl::StatusOr<Tensor> WithBytes(const Tensor& b) const {
    if (b.raw() != nullptr || b.num_elements() == 0) return b;
    return PlainB();
  }

  struct Compiled;

 private:
  DnnlMatMul(const Tensor& b, const Tensor* bias, Activation activation, bool b_transposed);
  // `plain_b`: b itself while Create runs, nullptr later (then the packed
  // reference copy is reordered).
  absl::StatusOr<std::shared_ptr<const Compiled>> CompiledFor(int64_t rows, const Tensor* plain_b = nullptr) const;

  int64_t k_, n_;
  Dims b_dims_;
  WeightSource source_;  // identifies b in the packed-weights registry
  Tensor bias_;
  Activation activation_;
  bool b_transposed_;
  bool empty_b_ = false;
  mutable absl::Mutex mu_;
  mutable std::map<std::pair<int64_t, int>, std::shared_ptr<const Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
  // A packed copy every other layout is made from: the one made at creation,
  // or, when its row count was a guess that no run has used yet, the first
  // run's (which then replaces it, so that a guess costs no lasting copy).
  mutable std::shared_ptr<const dnnl::memory> reference_ ABSL_GUARDED_BY(mu_);
  mutable std::optional<std::pair<int64_t, int>> unused_guess_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx
