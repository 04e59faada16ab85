// GRU (gates z, r, h), forward, reverse or bidirectional, with
// linear_before_reset, sequence_lens, initial_h, clip and layout:
//   zt = f(Xt Wz^T + Ht-1 Rz^T + Wbz + Rbz)      rt = f(Xt Wr^T + Ht-1 Rr^T + Wbr + Rbr)
//   ht = g(Xt Wh^T + (rt . Ht-1) Rh^T + Rbh + Wbh)          (linear_before_reset = 0)
//   ht = g(Xt Wh^T + rt . (Ht-1 Rh^T + Rbh) + Wbh)          (linear_before_reset = 1)
//   Ht = (1 - zt) . ht + zt . Ht-1
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/nn/nn_kernels.h"
#include "providers/cpu/nn/rnn_common.h"

namespace onyx {
namespace {

class Gru final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(RnnAttributes attrs, RnnAttributes::FromInfo(info, 2, {"Sigmoid", "Tanh"}));
    return std::unique_ptr<OpKernel>(
        new Gru(std::move(attrs), info.AttrOr<int64_t>("linear_before_reset", 0) != 0, PackConstantR(info, {2, 1})));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(RnnInputs in, ReadRnnInputs(ctx, attrs_, 3));
    if (in.compute_type == DataType::kDouble) return Run<double>(ctx, in);
    return Run<float>(ctx, in);
  }

 private:
  Gru(RnnAttributes attrs, bool linear_before_reset, RecurrentBlocks packed_r)
      : attrs_(std::move(attrs)), linear_before_reset_(linear_before_reset), packed_r_(std::move(packed_r)) {}

  template <typename T>
  absl::Status Run(OpKernelContext& ctx, const RnnInputs& in) const {
    const int64_t h = in.hidden, batch = in.batch, dirs = attrs_.num_directions;
    RnnOutputY<T> y;
    RETURN_IF_ERROR(y.Open(ctx, attrs_, in));
    Tensor y_h = in.initial_h.Clone();
    RETURN_IF_ERROR(ForEachDirection(dirs, [&](int d) -> absl::Status {
      std::vector<T> zr(batch * 2 * h), hh(batch * h), rh(batch * h);
      const bool reverse = attrs_.reverse || d == 1;
      ASSIGN_OR_RETURN(const T* xw, InputProjection<T>(in, d, 3, 2));
      T* state = y_h.mutable_data<T>() + d * batch * h;
      const T* r = in.r.data<T>() + d * 3 * h * h;
      const bool packed = !packed_r_.empty();
      const RecurrentBlock<T> r_zr(r, 2 * h, h, batch, packed ? &packed_r_[d][0] : nullptr);
      const RecurrentBlock<T> r_h(r + 2 * h * h, h, h, batch, packed ? &packed_r_[d][1] : nullptr);
      const T* rbh = in.b.data<T>() + d * 6 * h + 5 * h;
      const RnnActivation& f = attrs_.activation(d, 0);
      const RnnActivation& g = attrs_.activation(d, 1);
      for (int64_t step = 0; step < in.seq; ++step) {
        // z and r recurrent parts for every batch entry.
        RETURN_IF_ERROR(r_zr.Product(state, zr.data()));
        for (int64_t b = 0; b < batch; ++b) {
          if (step >= in.seq_lens[b]) continue;
          const int64_t t = RnnTimeIndex(reverse, step, in.seq_lens[b]);
          T* gates = zr.data() + b * 2 * h;
          const T* x = xw + in.XRow(t, b) * 3 * h;
          for (int64_t j = 0; j < 2 * h; ++j) gates[j] += x[j];
          ClipValues(gates, 2 * h, attrs_.clip);
          f.Apply(gates, 2 * h);
          // rt . Ht-1 for the h gate when the reset applies before the product.
          for (int64_t j = 0; j < h; ++j) rh[b * h + j] = gates[h + j] * state[b * h + j];
        }
        if (linear_before_reset_) {
          RETURN_IF_ERROR(r_h.Product(state, hh.data()));
        } else {
          RETURN_IF_ERROR(r_h.Product(rh.data(), hh.data()));
        }
        for (int64_t b = 0; b < batch; ++b) {
          if (step >= in.seq_lens[b]) continue;
          const int64_t t = RnnTimeIndex(reverse, step, in.seq_lens[b]);
          const T* z = zr.data() + b * 2 * h;
          const T* rg = z + h;
          const T* x = xw + in.XRow(t, b) * 3 * h + 2 * h;
          T* cand = hh.data() + b * h;
          for (int64_t j = 0; j < h; ++j) {
            cand[j] = linear_before_reset_ ? x[j] + rg[j] * (cand[j] + rbh[j]) : x[j] + cand[j] + rbh[j];
          }
          ClipValues(cand, h, attrs_.clip);
          g.Apply(cand, h);
          T* hs = state + b * h;
          for (int64_t j = 0; j < h; ++j) hs[j] = (T(1) - z[j]) * cand[j] + z[j] * hs[j];
          if (T* out = y.Row(t, d, b)) std::copy_n(hs, h, out);
        }
      }
      return absl::OkStatus();
    }));
    RETURN_IF_ERROR(y.Finish(ctx));
    return WriteRnnStates(ctx, attrs_, in, {&y_h});
  }

  RnnAttributes attrs_;
  bool linear_before_reset_;
  RecurrentBlocks packed_r_;  // [direction][z/r rows, h rows] of R, packed; empty unless R is constant float
};

}  // namespace

void RegisterGruKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("GRU").Since(7).Types("T", kFloatTypes).Build(), MakeFactory<Gru>());
  // Written by FuseRecurrentTransposes: x_layout and y_layout read X and write Y
  // in the order of the Transposes it removed.
  r.Register(KernelDefBuilder("GRU").Domain(kOnyxDomain).Build(), MakeFactory<Gru>());
}

}  // namespace onyx
