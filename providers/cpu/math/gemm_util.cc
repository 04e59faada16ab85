#include "providers/cpu/math/gemm_util.h"

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "oneapi/dnnl/dnnl.h"

namespace onyx {

absl::Status Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
    }
    return absl::OkStatus();
  }
  const bool serial = m * n * k < kSerialGemmWork;
  ScopedIntraOpThreads small_product(serial ? 1 : 0);
  ApplyThreadSettings();
  dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb,
                                    beta, c, ldc);
  if (status != dnnl_success) {
    return absl::InternalError(absl::StrCat("oneDNN sgemm failed with status ", static_cast<int>(status),
                                            " for M=", m, " N=", n, " K=", k));
  }
  return absl::OkStatus();
}

}  // namespace onyx
