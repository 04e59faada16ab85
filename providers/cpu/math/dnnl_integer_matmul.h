// DnnlIntegerMatMul: the int32 product y[M, N] = (a[M, K] - a_zp) x (b[K, N] - b_zp)
// for a constant b, by oneDNN's int8 matmul (VNNI where the CPU has it): what
// MatMulInteger and QLinearMatMul compute for the weights of a quantized
// transformer. b must be int8 with zero point 0 (ONNX Runtime's quantizer's
// default) or uint8 with zero point 128 (shifted to int8 once); a is uint8 or
// int8 with a run-time scalar zero point. b is reordered once into the
// primitive's layout and shared (packed_weights.h); primitives are compiled
// per (rows, a's type, intra-op threads), at most kMaxCompiled of them kept.
//
//   ASSIGN_OR_RETURN(auto mm, DnnlIntegerMatMul::Create(b, b_zero_point));
//   RETURN_IF_ERROR(mm->Run(a, rows, a_zero_point, y));   // y: rows x N int32
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "onyx/tensor.h"
#include "providers/cpu/math/dnnl_matmul.h"

namespace onyx {

class DnnlIntegerMatMul {
 public:
  static constexpr size_t kMaxCompiled = 64;

  // UNIMPLEMENTED when b is not 2-D 8-bit with a zero point oneDNN takes
  // (the caller keeps its reference path).
  static absl::StatusOr<std::unique_ptr<DnnlIntegerMatMul>> Create(const Tensor& b, const Tensor* b_zero_point);
  ~DnnlIntegerMatMul();

  // a: uint8 or int8, rows x K, row-major; y: rows x N.
  absl::Status Run(const Tensor& a, int64_t rows, int32_t a_zero_point, int32_t* y) const;

  // y[r, j] = act(acc[r, j] * scales[j] + bias[j]) in float, acc the int32
  // product above; scales holds N values, bias N or is nullptr.
  struct FloatEpilogue {
    const float* scales = nullptr;
    const float* bias = nullptr;
    DnnlMatMul::Activation activation = DnnlMatMul::Activation::kNone;
  };
  absl::Status RunToFloat(const Tensor& a, int64_t rows, int32_t a_zero_point, const FloatEpilogue& epilogue,
                          float* y) const;

  int64_t k() const { return b_.dims()[0]; }
  int64_t n() const { return b_.dims()[1]; }

  struct Compiled;

 private:
  explicit DnnlIntegerMatMul(Tensor b);
  // The output form: int32, or float with an optional bias and activation.
  struct Form {
    bool to_float = false;
    bool bias = false;
    DnnlMatMul::Activation activation = DnnlMatMul::Activation::kNone;
    int Key() const { return to_float ? 1 + (bias ? 1 : 0) + 2 * static_cast<int>(activation) : 0; }
  };
  absl::StatusOr<std::shared_ptr<const Compiled>> CompiledFor(int64_t rows, DataType a_type, Form form) const;
  absl::Status Execute(const Compiled& c, const Tensor& a, int64_t rows, int32_t a_zero_point, void* y,
                       const float* scales, const float* bias) const;

  Tensor b_;  // int8 [K, N]
  mutable absl::Mutex mu_;
  mutable std::map<std::tuple<int64_t, DataType, int, int>, std::shared_ptr<const Compiled>> compiled_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx
