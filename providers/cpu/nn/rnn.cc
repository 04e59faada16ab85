// RNN: Ht = f(Xt * W^T + Ht-1 * R^T + Wb + Rb), forward, reverse or
// bidirectional, with sequence_lens, initial_h, clip and layout.
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/nn/nn_kernels.h"
#include "providers/cpu/nn/rnn_common.h"

namespace onyx {
namespace {

class Rnn final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(RnnAttributes attrs, RnnAttributes::FromInfo(info, 1, {"Tanh"}));
    return std::unique_ptr<OpKernel>(new Rnn(std::move(attrs), PackConstantR(info, {1})));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(RnnInputs in, ReadRnnInputs(ctx, attrs_, 1));
    if (in.compute_type == DataType::kDouble) return Run<double>(ctx, in);
    return Run<float>(ctx, in);
  }

 private:
  Rnn(RnnAttributes attrs, RecurrentBlocks packed_r) : attrs_(std::move(attrs)), packed_r_(std::move(packed_r)) {}

  template <typename T>
  absl::Status Run(OpKernelContext& ctx, const RnnInputs& in) const {
    const int64_t h = in.hidden, batch = in.batch, dirs = attrs_.num_directions;
    RnnOutputY<T> y;
    RETURN_IF_ERROR(y.Open(ctx, attrs_, in));
    Tensor y_h = in.initial_h.Clone();
    RETURN_IF_ERROR(ForEachDirection(dirs, [&](int d) -> absl::Status {
      std::vector<T> hr(batch * h);
      const bool reverse = attrs_.reverse || d == 1;
      ASSIGN_OR_RETURN(const T* xw, InputProjection<T>(in, d, 1, 1));
      T* state = y_h.mutable_data<T>() + d * batch * h;
      const RecurrentBlock<T> r(in.r.data<T>() + d * h * h, h, h, batch,
                                packed_r_.empty() ? nullptr : &packed_r_[d][0]);
      for (int64_t step = 0; step < in.seq; ++step) {
        RETURN_IF_ERROR(r.Product(state, hr.data()));
        for (int64_t b = 0; b < batch; ++b) {
          if (step >= in.seq_lens[b]) continue;
          const int64_t t = RnnTimeIndex(reverse, step, in.seq_lens[b]);
          T* gate = hr.data() + b * h;
          const T* x = xw + in.XRow(t, b) * h;
          for (int64_t j = 0; j < h; ++j) gate[j] += x[j];
          ClipValues(gate, h, attrs_.clip);
          attrs_.activation(d, 0).Apply(gate, h);
          std::copy(gate, gate + h, state + b * h);
          if (T* out = y.Row(t, d, b)) std::copy(gate, gate + h, out);
        }
      }
      return absl::OkStatus();
    }));
    RETURN_IF_ERROR(y.Finish(ctx));
    return WriteRnnStates(ctx, attrs_, in, {&y_h});
  }

  RnnAttributes attrs_;
  RecurrentBlocks packed_r_;  // [direction][0]: R, packed; empty unless R is constant float
};

}  // namespace

void RegisterRnnKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("RNN").Since(7).Types("T", kFloatTypes).Build(), MakeFactory<Rnn>());
  // Written by FuseRecurrentTransposes: x_layout and y_layout read X and write Y
  // in the order of the Transposes it removed.
  r.Register(KernelDefBuilder("RNN").Domain(kOnyxDomain).Build(), MakeFactory<Rnn>());
}

}  // namespace onyx
