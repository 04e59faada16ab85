// ReverseSequence: reverses the first sequence_lens[b] time steps of each
// batch entry; the rest is copied. Moves whole [inner] runs.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class ReverseSequence final : public OpKernel {
 public:
  explicit ReverseSequence(const OpKernelInfo& info)
      : batch_axis_(info.AttrOr<int64_t>("batch_axis", 1)), time_axis_(info.AttrOr<int64_t>("time_axis", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    std::vector<int64_t> lens;
    absl::Status s = ReadInt64s(*ctx.Input(1), "sequence_lens", &lens);
    if (!s.ok()) return ctx.Error(s.message());
    const bool batch_first = batch_axis_ == 0 && time_axis_ == 1;
    if (x.rank() < 2 || !(batch_first || (batch_axis_ == 1 && time_axis_ == 0))) {
      return ctx.Error(absl::StrCat("expected rank >= 2 with (batch_axis, time_axis) = (0, 1) or (1, 0), received ",
                                    DimsToString(x.dims()), " and (", batch_axis_, ", ", time_axis_, ")"));
    }
    const int64_t batch = x.dims()[batch_axis_], time = x.dims()[time_axis_];
    if (static_cast<int64_t>(lens.size()) != batch) {
      return ctx.Error(absl::StrCat("sequence_lens has ", lens.size(), " entries for batch size ", batch));
    }
    int64_t inner = 1;
    for (int64_t a = 2; a < x.rank(); ++a) inner *= x.dims()[a];
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), x.type()));
    auto offset = [&](int64_t b, int64_t t) { return (batch_first ? b * time + t : t * batch + b) * inner; };
    for (int64_t b = 0; b < batch; ++b) {
      if (lens[b] < 0 || lens[b] > time) {
        return ctx.Error(absl::StrCat("sequence_lens[", b, "] = ", lens[b], " is out of range [0, ", time, "]"));
      }
      for (int64_t t = 0; t < time; ++t) {
        const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
        CopyElements(x.type(), x.raw(), offset(b, from), y->mutable_raw(), offset(b, t), inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t batch_axis_, time_axis_;
};

}  // namespace

void RegisterReverseSequenceKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("ReverseSequence").Since(10).Build(), MakeFactory<ReverseSequence>());
}

}  // namespace onyx
