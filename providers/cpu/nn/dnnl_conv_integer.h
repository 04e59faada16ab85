// DnnlIntegerConvolution: ConvInteger's int32 convolution of (x - x_zp) and
// (w - w_zp) by oneDNN's int8 convolution primitive (VNNI where the CPU has
// it), for constant weights whose zero point oneDNN can take: int8 weights
// with zero point 0 (what ONNX Runtime's quantizer writes by default), or
// uint8 weights with zero point 128 (shifted to int8 once). x is uint8 or
// int8 with a run-time scalar zero point; padding counts as x_zp (a real 0).
//
//   ASSIGN_OR_RETURN(auto conv, DnnlIntegerConvolution::Create(attrs, group, w, w_zp));
//   RETURN_IF_ERROR(conv->Run(x, x_zero_point, y));   // y: int32 [N, M, out...]
//
// Layouts, weight reorders and the per-(shape, threads) primitive cache work
// as for DnnlConvolution. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "onyx/tensor.h"
#include "providers/cpu/nn/conv_attributes.h"

namespace onyx {

class DnnlIntegerConvolution {
 public:
  // UNIMPLEMENTED when the weights' type or zero point is not one oneDNN
  // takes (the caller keeps its reference path).
  static absl::StatusOr<std::unique_ptr<DnnlIntegerConvolution>> Create(const ConvAttributes& attrs, int64_t group,
                                                                        const Tensor& weights,
                                                                        const Tensor* weights_zero_point);
  ~DnnlIntegerConvolution();

  // x: uint8 or int8 [N, C, d...]; y: int32 of OutputDims(x.dims()).
  absl::Status Run(const Tensor& x, int32_t x_zero_point, Tensor& y) const;
  absl::StatusOr<Dims> OutputDims(absl::Span<const int64_t> x) const;

  struct Compiled;

 private:
  DnnlIntegerConvolution(const ConvAttributes& attrs, int64_t group, Tensor weights);
  absl::StatusOr<std::shared_ptr<const Compiled>> CompiledFor(const Tensor& x) const;

  ConvAttributes attrs_;
  int64_t group_;
  Tensor weights_;  // int8, [M, C/group, k...]
  mutable absl::Mutex mu_;
  // By (input dims, input type, intra-op threads).
  mutable std::map<std::tuple<Dims, DataType, int>, std::shared_ptr<const Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx
