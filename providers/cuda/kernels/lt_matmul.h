// Row-major (batched) matrix products through cuBLASLt, for MatMul, Gemm,
// FusedMatMul and FusedGemm.
//
//   LtProduct p;
//   p.type = DataType::kFloat;
//   p.m = rows; p.n = cols; p.k = depth;       // D [m, n] = A [m, k] x B [k, n]
//   p.a = a; p.b = b; p.d = y; p.bias = bias;  // bias [n] added to every row
//   p.epilogue = LtEpilogue::kRelu;
//   RETURN_IF_ERROR(RunLtProduct(p, CurrentCudaLane(), node));
//
// D = epilogue(alpha * op(A) op(B) + beta * C + bias). The epilogues are the
// ones whose formula equals ONNX's: Relu, and cuBLASLt's GELU, which is the
// tanh approximation (ONNX Gelu with approximate="tanh" only: the optimizer's
// FusedMatMul activation "Gelu" and com.onyx Gelu are the exact erf form, so
// they run as the bias epilogue plus a separate element-wise erf GELU).
//
// Accumulation is float; float32 products use TF32 tensor cores only when the
// lane allows it (CUBLAS_COMPUTE_32F_FAST_TF32), otherwise CUBLAS_COMPUTE_32F.
// The algorithm is chosen by cuBLASLt's heuristic once per product shape,
// layout, epilogue, pointer alignment and workspace size, and cached
// process-wide (thread-safe); the descriptors live on the stack of each call.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "graph/graph.h"
#include "onyx/data_type.h"
#include "providers/cuda/cuda_lane.h"

namespace onyx::cuda_ops {

enum class LtEpilogue { kNone, kRelu, kGeluTanh };

struct LtProduct {
  DataType type = DataType::kFloat;  // of A, B, C, D and bias: kFloat or kFloat16
  bool trans_a = false;              // A is stored [k, m] (else [m, k])
  bool trans_b = false;              // B is stored [n, k] (else [k, n])
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  // Elements between consecutive matrices of a batch; 0 repeats one matrix.
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  // Row lengths (leading dims) of the row-major storage; 0: the dense value.
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  float alpha = 1.f, beta = 0.f;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // [m, n] like D (ldc, stride_c); read when beta != 0; may equal d
  void* d = nullptr;
  const void* bias = nullptr;  // [n], or nullptr
  LtEpilogue epilogue = LtEpilogue::kNone;
};

// Enqueues the product on lane.stream with lane.workspace. INTERNAL naming
// `node` and the cuBLASLt status when a call fails or no algorithm fits.
absl::Status RunLtProduct(const LtProduct& p, const CudaLane& lane, const Node& node);

}  // namespace onyx::cuda_ops
