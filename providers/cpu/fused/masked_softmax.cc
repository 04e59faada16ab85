// com.onyx MaskedSoftmax(X, M), float: Softmax(X + M) over X's last axis, M
// broadcasting to X's shape (numpy; X's shape is the output's). An attention
// block's mask Add and its Softmax in one pass over the scores instead of
// two: each row of X is summed with its row of M into Y, then normalised in
// place (simd::SoftmaxRow).
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

class MaskedSoftmax final : public OpKernel {
 public:
  explicit MaskedSoftmax(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* m, RequireInput(ctx, 1, "M"));
    if (x->type() != DataType::kFloat || m->type() != DataType::kFloat) {
      return ctx.Error(
          absl::StrCat("X and M must be float, received ", DataTypeName(x->type()), " and ", DataTypeName(m->type())));
    }
    auto shape = BroadcastShape(x->dims(), m->dims());
    if (x->rank() < 1 || !shape.ok() || *shape != x->dims()) {
      return ctx.Error(absl::StrCat("M ", DimsToString(m->dims()), " must broadcast to X ", DimsToString(x->dims()),
                                    " (rank >= 1)"));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), DataType::kFloat));
    const int64_t rank = x->rank(), len = x->dims().back();
    if (y->num_elements() == 0) return absl::OkStatus();
    const int64_t rows = x->num_elements() / len;
    const std::vector<int64_t> m_strides = BroadcastStrides(m->dims(), x->dims());
    const bool m_row_broadcast = m_strides[rank - 1] == 0 && len > 1;  // one value per row
    const float* px = x->data<float>();
    const float* pm = m->data<float>();
    float* py = y->mutable_data<float>();
    ParallelFor(rows, std::max<int64_t>(1, 4096 / len), [&](int64_t begin, int64_t end) {
      std::vector<float> row_of_one_value(m_row_broadcast ? len : 0);
      for (int64_t r = begin; r < end; ++r) {
        int64_t offset = 0;
        for (int64_t d = rank - 2, rest = r; d >= 0; --d) {
          offset += (rest % x->dims()[d]) * m_strides[d];
          rest /= x->dims()[d];
        }
        const float* mask = pm + offset;
        if (m_row_broadcast) {
          std::fill(row_of_one_value.begin(), row_of_one_value.end(), *mask);
          mask = row_of_one_value.data();
        }
        simd::SoftmaxRow(px + r * len, mask, py + r * len, len);
      }
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterMaskedSoftmaxKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MaskedSoftmax").Domain(kOnyxDomain).Build(), MakeFactory<MaskedSoftmax>());
}

}  // namespace onyx
