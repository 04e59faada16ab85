#include "providers/cuda/kernels/lt_matmul.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace onyx::cuda_ops {
namespace {

// Everything cuBLASLt's heuristic sees: a cached algorithm is valid for
// every call with an equal key.
struct AlgoKey {
  int device = 0;
  DataType type = DataType::kFloat;
  bool trans_a = false, trans_b = false, tf32 = false, bias = false, beta = false;
  LtEpilogue epilogue = LtEpilogue::kNone;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  uint32_t align_a = 0, align_b = 0, align_c = 0, align_d = 0;
  size_t workspace = 0;

  auto Tie() const {
    return std::tie(device, type, trans_a, trans_b, tf32, bias, beta, epilogue, m, n, k, batch, stride_a, stride_b,
                    stride_c, stride_d, lda, ldb, ldc, ldd, align_a, align_b, align_c, align_d, workspace);
  }
  bool operator==(const AlgoKey& o) const { return Tie() == o.Tie(); }
  template <typename H>
  friend H AbslHashValue(H h, const AlgoKey& key) {
    return H::combine(std::move(h), key.Tie());
  }
};

class AlgoCache {
 public:
  bool Find(const AlgoKey& key, cublasLtMatmulAlgo_t* algo) {
    absl::MutexLock lock(&mu_);
    auto it = algos_.find(key);
    if (it == algos_.end()) return false;
    *algo = it->second;
    return true;
  }
  void Insert(const AlgoKey& key, const cublasLtMatmulAlgo_t& algo) {
    absl::MutexLock lock(&mu_);
    if (algos_.size() >= kMaxEntries) algos_.clear();  // shapes churn: start over rather than grow
    algos_[key] = algo;
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  absl::Mutex mu_;
  absl::flat_hash_map<AlgoKey, cublasLtMatmulAlgo_t> algos_ ABSL_GUARDED_BY(mu_);
};

AlgoCache& Cache() {
  static AlgoCache* cache = new AlgoCache();
  return *cache;
}

absl::Status LtStatus(const Node& node, const char* what, cublasStatus_t s) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(node.Label(), ": cuBLASLt ", what, " failed: ", cublasGetStatusName(s), " (",
                                          cublasGetStatusString(s), ")"));
}

// Largest power of two <= 16 dividing the address and, for batches, the
// stride in bytes (every matrix of the batch must be as aligned).
uint32_t Alignment(const void* p, int64_t stride, int64_t batch, size_t elem) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  if (batch > 1 && stride != 0) v |= static_cast<uintptr_t>(stride) * elem;
  uint32_t a = 16;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

cublasStatus_t SetBatch(cublasLtMatrixLayout_t layout, int64_t batch, int64_t stride) {
  if (batch <= 1) return CUBLAS_STATUS_SUCCESS;
  const int32_t count = static_cast<int32_t>(batch);
  cublasStatus_t s =
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  return cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
}

cublasLtEpilogue_t EpilogueOf(LtEpilogue e, bool bias) {
  switch (e) {
    case LtEpilogue::kNone: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case LtEpilogue::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case LtEpilogue::kGeluTanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

#define ONYX_LT_RETURN_IF_ERROR(what, expr)                                                     \
  do {                                                                                          \
    const cublasStatus_t onyx_lt_status_ = (expr);                                              \
    if (onyx_lt_status_ != CUBLAS_STATUS_SUCCESS) return LtStatus(node, what, onyx_lt_status_); \
  } while (0)

}  // namespace

absl::Status RunLtProduct(const LtProduct& in, const CudaLane& lane, const Node& node) {
  LtProduct p = in;
  if (p.m == 0 || p.n == 0 || p.batch == 0) return absl::OkStatus();
  if (p.type != DataType::kFloat && p.type != DataType::kFloat16) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.Label(), ": cuBLASLt products take float and float16, received ", DataTypeName(p.type)));
  }
  const size_t elem = ElementSize(p.type);
  if (p.k == 0) {
    // An empty sum: D = beta * C + bias, which only the zero case needs here.
    if (p.beta != 0.f || p.bias != nullptr) {
      return absl::UnimplementedError(absl::StrCat(node.Label(), ": a product with k = 0 and a C or bias input"));
    }
    const size_t bytes = static_cast<size_t>(p.m * (p.ldd ? p.ldd : p.n)) * elem;
    for (int64_t b = 0; b < p.batch; ++b) {
      cudaError_t err = cudaMemsetAsync(static_cast<char*>(p.d) + b * p.stride_d * elem, 0, bytes, lane.stream);
      if (err != cudaSuccess) {
        return absl::InternalError(absl::StrCat(node.Label(), ": cudaMemsetAsync failed: ", cudaGetErrorString(err)));
      }
    }
    return absl::OkStatus();
  }
  if (p.lda == 0) p.lda = p.trans_a ? p.m : p.k;
  if (p.ldb == 0) p.ldb = p.trans_b ? p.k : p.n;
  if (p.ldd == 0) p.ldd = p.n;
  if (p.c == nullptr || p.beta == 0.f) {
    p.c = p.d;
    p.ldc = p.ldd;
    p.stride_c = p.stride_d;
  }
  if (p.ldc == 0) p.ldc = p.n;

  const cudaDataType_t dt = p.type == DataType::kFloat ? CUDA_R_32F : CUDA_R_16F;
  const bool tf32 = p.type == DataType::kFloat && lane.allow_tf32;
  const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;

  // Column-major view: D^T [n, m] = op(B)^T [n, k] x op(A)^T [k, m], so
  // cuBLASLt's A is our B and its B our A; row-major storage of [r, c] with
  // leading dim ld is column-major [c, r] with the same ld.
  cublasLtMatmulDescOpaque_t desc_storage;
  cublasLtMatrixLayoutOpaque_t la_storage, lb_storage, lc_storage, ld_storage;
  cublasLtMatmulDesc_t desc = &desc_storage;
  cublasLtMatrixLayout_t la = &la_storage, lb = &lb_storage, lc = &lc_storage, ld = &ld_storage;
  ONYX_LT_RETURN_IF_ERROR("matmul descriptor", cublasLtMatmulDescInit(desc, compute, CUDA_R_32F));
  const cublasOperation_t op_a = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  ONYX_LT_RETURN_IF_ERROR("transa",
                          cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  ONYX_LT_RETURN_IF_ERROR("transb",
                          cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  const cublasLtEpilogue_t epilogue = EpilogueOf(p.epilogue, p.bias != nullptr);
  ONYX_LT_RETURN_IF_ERROR(
      "epilogue", cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  if (p.bias != nullptr) {
    ONYX_LT_RETURN_IF_ERROR(
        "bias", cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p.bias, sizeof(p.bias)));
  }
  if (p.trans_b) {
    ONYX_LT_RETURN_IF_ERROR("layout A", cublasLtMatrixLayoutInit(la, dt, p.k, p.n, p.ldb));
  } else {
    ONYX_LT_RETURN_IF_ERROR("layout A", cublasLtMatrixLayoutInit(la, dt, p.n, p.k, p.ldb));
  }
  if (p.trans_a) {
    ONYX_LT_RETURN_IF_ERROR("layout B", cublasLtMatrixLayoutInit(lb, dt, p.m, p.k, p.lda));
  } else {
    ONYX_LT_RETURN_IF_ERROR("layout B", cublasLtMatrixLayoutInit(lb, dt, p.k, p.m, p.lda));
  }
  ONYX_LT_RETURN_IF_ERROR("layout C", cublasLtMatrixLayoutInit(lc, dt, p.n, p.m, p.ldc));
  ONYX_LT_RETURN_IF_ERROR("layout D", cublasLtMatrixLayoutInit(ld, dt, p.n, p.m, p.ldd));
  ONYX_LT_RETURN_IF_ERROR("batch A", SetBatch(la, p.batch, p.stride_b));
  ONYX_LT_RETURN_IF_ERROR("batch B", SetBatch(lb, p.batch, p.stride_a));
  ONYX_LT_RETURN_IF_ERROR("batch C", SetBatch(lc, p.batch, p.stride_c));
  ONYX_LT_RETURN_IF_ERROR("batch D", SetBatch(ld, p.batch, p.stride_d));

  AlgoKey key;
  cudaGetDevice(&key.device);
  key.type = p.type;
  key.trans_a = p.trans_a;
  key.trans_b = p.trans_b;
  key.tf32 = tf32;
  key.bias = p.bias != nullptr;
  key.beta = p.beta != 0.f;
  key.epilogue = p.epilogue;
  key.m = p.m, key.n = p.n, key.k = p.k, key.batch = p.batch;
  key.stride_a = p.stride_a, key.stride_b = p.stride_b, key.stride_c = p.stride_c, key.stride_d = p.stride_d;
  key.lda = p.lda, key.ldb = p.ldb, key.ldc = p.ldc, key.ldd = p.ldd;
  // Our A and B are cuBLASLt's B and A.
  key.align_a = Alignment(p.a, p.stride_a, p.batch, elem);
  key.align_b = Alignment(p.b, p.stride_b, p.batch, elem);
  key.align_c = Alignment(p.c, p.stride_c, p.batch, elem);
  key.align_d = Alignment(p.d, p.stride_d, p.batch, elem);
  key.workspace = lane.workspace == nullptr ? 0 : lane.workspace_bytes;

  cublasLtMatmulAlgo_t algo;
  if (!Cache().Find(key, &algo)) {
    cublasLtMatmulPreferenceOpaque_t pref_storage;
    cublasLtMatmulPreference_t pref = &pref_storage;
    ONYX_LT_RETURN_IF_ERROR("preference", cublasLtMatmulPreferenceInit(pref));
    const uint64_t workspace = key.workspace;
    ONYX_LT_RETURN_IF_ERROR("workspace preference",
                            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                 &workspace, sizeof(workspace)));
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_c},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_d}};
    for (const auto& [attr, value] : alignments) {
      ONYX_LT_RETURN_IF_ERROR("alignment preference",
                              cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
    }
    cublasLtMatmulHeuristicResult_t result;
    int returned = 0;
    ONYX_LT_RETURN_IF_ERROR("algorithm heuristic", cublasLtMatmulAlgoGetHeuristic(lane.cublaslt, desc, la, lb, lc, ld,
                                                                                  pref, 1, &result, &returned));
    if (returned == 0) {
      return absl::InternalError(absl::StrCat(node.Label(), ": cuBLASLt has no algorithm for a ", p.m, "x", p.n, "x",
                                              p.k, " ", DataTypeName(p.type), " product (batch ", p.batch, ") within ",
                                              key.workspace, " bytes of workspace"));
    }
    algo = result.algo;
    Cache().Insert(key, algo);
  }
  ONYX_LT_RETURN_IF_ERROR("matmul", cublasLtMatmul(lane.cublaslt, desc, &p.alpha, p.b, la, p.a, lb, &p.beta, p.c, lc,
                                                   p.d, ld, &algo, lane.workspace, key.workspace, lane.stream));
  return absl::OkStatus();
}

}  // namespace onyx::cuda_ops
