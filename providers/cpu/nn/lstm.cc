// LSTM (gates i, o, f, c), forward, reverse or bidirectional, with peepholes,
// input_forget, sequence_lens, initial_h/initial_c, clip and layout:
//   it = f(Xt Wi^T + Ht-1 Ri^T + Pi . Ct-1 + Wbi + Rbi)
//   ft = f(Xt Wf^T + Ht-1 Rf^T + Pf . Ct-1 + Wbf + Rbf)     (1 - it with input_forget)
//   ct = g(Xt Wc^T + Ht-1 Rc^T + Wbc + Rbc)
//   Ct = ft . Ct-1 + it . ct
//   ot = f(Xt Wo^T + Ht-1 Ro^T + Po . Ct + Wbo + Rbo)
//   Ht = ot . h(Ct)
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/nn/nn_kernels.h"
#include "providers/cpu/nn/rnn_common.h"

namespace onyx {
namespace {

class Lstm final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(RnnAttributes attrs, RnnAttributes::FromInfo(info, 3, {"Sigmoid", "Tanh", "Tanh"}));
    return std::unique_ptr<OpKernel>(
        new Lstm(std::move(attrs), info.AttrOr<int64_t>("input_forget", 0) != 0, PackConstantR(info, {4})));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(RnnInputs in, ReadRnnInputs(ctx, attrs_, 4));
    ASSIGN_OR_RETURN(Tensor initial_c, ReadRnnState(ctx, 6, attrs_, in, "initial_c"));
    Tensor peepholes;
    if (const Tensor* p = ctx.Input(7)) {
      const Dims expected = {attrs_.num_directions, 3 * in.hidden};
      if (p->dims() != expected) {
        return ctx.Error(absl::StrCat("P has shape ", DimsToString(p->dims()), ", expected ", DimsToString(expected)));
      }
      ASSIGN_OR_RETURN(peepholes, ConvertNumeric(*p, in.compute_type));
    } else {
      peepholes = Tensor::Allocate(in.compute_type, {attrs_.num_directions, 3 * in.hidden});
    }
    const bool has_peepholes = ctx.Input(7) != nullptr;
    if (in.compute_type == DataType::kDouble) return Run<double>(ctx, in, initial_c, peepholes, has_peepholes);
    return Run<float>(ctx, in, initial_c, peepholes, has_peepholes);
  }

 private:
  Lstm(RnnAttributes attrs, bool input_forget, RecurrentBlocks packed_r)
      : attrs_(std::move(attrs)), input_forget_(input_forget), packed_r_(std::move(packed_r)) {}

  template <typename T>
  absl::Status Run(OpKernelContext& ctx, const RnnInputs& in, const Tensor& initial_c, const Tensor& peepholes,
                   bool has_peepholes) const {
    const int64_t h = in.hidden, batch = in.batch, dirs = attrs_.num_directions;
    RnnOutputY<T> y;
    RETURN_IF_ERROR(y.Open(ctx, attrs_, in));
    Tensor y_h = in.initial_h.Clone();
    Tensor y_c = initial_c.Clone();
    RETURN_IF_ERROR(ForEachDirection(dirs, [&](int d) -> absl::Status {
      std::vector<T> g4(batch * 4 * h);
      const bool reverse = attrs_.reverse || d == 1;
      ASSIGN_OR_RETURN(const T* xw, InputProjection<T>(in, d, 4, 4));
      T* hstate = y_h.mutable_data<T>() + d * batch * h;
      T* cstate = y_c.mutable_data<T>() + d * batch * h;
      const RecurrentBlock<T> r(in.r.data<T>() + d * 4 * h * h, 4 * h, h, batch,
                                packed_r_.empty() ? nullptr : &packed_r_[d][0]);
      const T* p = peepholes.data<T>() + d * 3 * h;
      const T *pi = p, *po = p + h, *pf = p + 2 * h;
      const RnnActivation& f = attrs_.activation(d, 0);
      const RnnActivation& g = attrs_.activation(d, 1);
      const RnnActivation& hact = attrs_.activation(d, 2);
      // The common cell (default activations, no peepholes, clip or
      // input_forget) in one vectorised pass.
      const bool plain_cell = !has_peepholes && attrs_.clip <= 0.f && !input_forget_ &&
                              f.kind == RnnActivation::Kind::kSigmoid && g.kind == RnnActivation::Kind::kTanh &&
                              hact.kind == RnnActivation::Kind::kTanh;
      for (int64_t step = 0; step < in.seq; ++step) {
        RETURN_IF_ERROR(r.Product(hstate, g4.data()));
        for (int64_t b = 0; b < batch; ++b) {
          if (step >= in.seq_lens[b]) continue;
          const int64_t t = RnnTimeIndex(reverse, step, in.seq_lens[b]);
          T* gates = g4.data() + b * 4 * h;
          const T* x = xw + in.XRow(t, b) * 4 * h;
          T* out = y.Row(t, d, b);
          if constexpr (std::is_same_v<T, float>) {
            if (plain_cell) {
              simd::LstmCell(gates, x, h, cstate + b * h, hstate + b * h);
              if (out != nullptr) std::copy_n(hstate + b * h, h, out);
              continue;
            }
          }
          for (int64_t j = 0; j < 4 * h; ++j) gates[j] += x[j];
          T *i = gates, *o = gates + h, *fg = gates + 2 * h, *c = gates + 3 * h;
          T* cs = cstate + b * h;
          for (int64_t j = 0; j < h; ++j) {
            i[j] += pi[j] * cs[j];
            fg[j] += pf[j] * cs[j];
          }
          ClipValues(gates, 4 * h, attrs_.clip);
          f.Apply(i, h);
          if (input_forget_) {
            for (int64_t j = 0; j < h; ++j) fg[j] = T(1) - i[j];
          } else {
            f.Apply(fg, h);
          }
          g.Apply(c, h);
          for (int64_t j = 0; j < h; ++j) cs[j] = fg[j] * cs[j] + i[j] * c[j];
          for (int64_t j = 0; j < h; ++j) o[j] += po[j] * cs[j];
          if (attrs_.clip > 0.f) ClipValues(o, h, attrs_.clip);
          f.Apply(o, h);
          // Ht = ot . h(Ct), staged in the (now free) c gate slot.
          std::copy(cs, cs + h, c);
          hact.Apply(c, h);
          T* hs = hstate + b * h;
          for (int64_t j = 0; j < h; ++j) hs[j] = o[j] * c[j];
          if (out != nullptr) std::copy_n(hs, h, out);
        }
      }
      return absl::OkStatus();
    }));
    RETURN_IF_ERROR(y.Finish(ctx));
    return WriteRnnStates(ctx, attrs_, in, {&y_h, &y_c});
  }

  RnnAttributes attrs_;
  bool input_forget_;
  RecurrentBlocks packed_r_;  // [direction][0]: the 4h rows of R, packed; empty unless R is constant float
};

}  // namespace

void RegisterLstmKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("LSTM").Since(7).Types("T", kFloatTypes).Build(), MakeFactory<Lstm>());
  // Written by FuseRecurrentTransposes: x_layout and y_layout read X and write Y
  // in the order of the Transposes it removed.
  r.Register(KernelDefBuilder("LSTM").Domain(kOnyxDomain).Build(), MakeFactory<Lstm>());
}

}  // namespace onyx
