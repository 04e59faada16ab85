// Trilu: keeps the upper (or lower) triangle of the last two axes, relative to
// diagonal k, and zeroes the rest. Each matrix row is one kept run plus zeros.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class Trilu final : public OpKernel {
 public:
  explicit Trilu(const OpKernelInfo& info) : upper_(info.AttrOr<int64_t>("upper", 1) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    if (x.rank() < 2) return ctx.Error(absl::StrCat("input must have rank >= 2, received ", DimsToString(x.dims())));
    int64_t k = 0;
    if (const Tensor* kt = ctx.Input(1)) {
      std::vector<int64_t> v;
      absl::Status s = ReadInt64s(*kt, "input 'k'", &v);
      if (!s.ok() || v.size() != 1) return ctx.Error("input 'k' must be one int64 value");
      k = v[0];
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), x.type()));
    const int64_t rows = x.dims()[x.rank() - 2], cols = x.dims()[x.rank() - 1];
    const int64_t matrices = rows * cols == 0 ? 0 : x.num_elements() / (rows * cols);
    const Tensor zero = Tensor::Allocate(x.type(), {});
    ParallelFor(matrices * rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cols)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t i = r % rows;
        // Kept columns: j >= i + k (upper) or j <= i + k (lower).
        int64_t keep_begin = upper_ ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        int64_t keep_end = upper_ ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        const int64_t base = r * cols;
        for (int64_t j = 0; j < keep_begin; ++j) CopyElements(x.type(), zero.raw(), 0, y->mutable_raw(), base + j, 1);
        CopyElements(x.type(), x.raw(), base + keep_begin, y->mutable_raw(), base + keep_begin, keep_end - keep_begin);
        for (int64_t j = keep_end; j < cols; ++j) CopyElements(x.type(), zero.raw(), 0, y->mutable_raw(), base + j, 1);
      }
    });
    return absl::OkStatus();
  }

 private:
  bool upper_;
};

}  // namespace

void RegisterTriluKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Trilu").Since(14).Build(), MakeFactory<Trilu>());
}

}  // namespace onyx
