// Gemm: Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast.
// float16/bfloat16 compute in float. A float Gemm with a constant B, alpha 1,
// no transA and no C or a constant bias row C with beta 1 (every exported
// fully connected layer) runs oneDNN's matmul with B packed once and the bias
// inside the primitive (DnnlMatMul).
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/dnnl_matmul.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

// out [m, n] = C unidirectionally broadcast (C's shape already checked). The
// shapes Gemm's C takes in practice, a bias row [n] or [1, n], a column [m, 1],
// a scalar or the full matrix, are copied directly; no per-element indexing.
template <typename T>
void FillWithBroadcastC(const Tensor& c, int64_t m, int64_t n, T* out) {
  const T* pc = c.data<T>();
  const int64_t count = c.num_elements();
  const int64_t last = c.rank() == 0 ? 1 : c.dims().back();
  if (count == m * n) {
    std::copy(pc, pc + count, out);
  } else if (count == 1) {
    std::fill(out, out + m * n, pc[0]);
  } else if (count == n && last == n) {
    for (int64_t r = 0; r < m; ++r) std::copy(pc, pc + n, out + r * n);
  } else {  // [m, 1]
    for (int64_t r = 0; r < m; ++r) std::fill(out + r * n, out + (r + 1) * n, pc[r]);
  }
}

class Gemm final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto gemm = std::unique_ptr<Gemm>(new Gemm(info));
    const Tensor* b = info.ConstantInput(1);
    const bool has_c = info.HasInput(2);
    const Tensor* c = has_c ? info.ConstantInput(2) : nullptr;
    if (b == nullptr || b->type() != DataType::kFloat || b->rank() != 2 || b->num_elements() == 0 || gemm->trans_a_ ||
        gemm->alpha_ != 1.f || (has_c && c == nullptr)) {
      return std::unique_ptr<OpKernel>(std::move(gemm));
    }
    const int64_t n = gemm->trans_b_ ? b->dims()[0] : b->dims()[1];
    const bool bias_row = c != nullptr && c->type() == DataType::kFloat && c->num_elements() == n && c->rank() >= 1 &&
                          c->rank() <= 2 && c->dims().back() == n && gemm->beta_ == 1.f;
    if (c != nullptr && !bias_row) return std::unique_ptr<OpKernel>(std::move(gemm));
    auto packed = DnnlMatMul::Create(*b, c, DnnlMatMul::Activation::kNone, gemm->trans_b_,
                                     DnnlMatMul::RowsHint(info.InputInfo(0)));
    if (!packed.ok()) return info.Error(packed.status().message());
    gemm->packed_ = *std::move(packed);
    return std::unique_ptr<OpKernel>(std::move(gemm));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a_in, RequireInput(ctx, 0, "A"));
    ASSIGN_OR_RETURN(const Tensor* b_in, RequireInput(ctx, 1, "B"));
    const Tensor* c_in = ctx.Input(2);
    if (packed_ != nullptr && a_in->type() == DataType::kFloat && a_in->rank() == 2 &&
        a_in->dims()[1] == packed_->k()) {
      ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, {a_in->dims()[0], packed_->n()}, DataType::kFloat));
      absl::Status status = packed_->Run(a_in->data<float>(), a_in->dims()[0], y->mutable_data<float>());
      return status.ok() ? status : ctx.Error(status.message());
    }
    // float16/bfloat16 multiply in float.
    const Tensor a = UpcastToFloat(*a_in);
    Tensor b_bytes = *b_in;
    if (packed_ != nullptr) {
      ASSIGN_OR_RETURN(b_bytes, packed_->WithBytes(*b_in));
    }
    const Tensor b = UpcastToFloat(b_bytes);
    Tensor c_float = c_in != nullptr ? UpcastToFloat(*c_in) : Tensor();
    const Tensor* c = c_in != nullptr ? &c_float : nullptr;
    if (a.rank() != 2 || b.rank() != 2) {
      return ctx.Error(
          absl::StrCat("A and B must be 2-D, received ", DimsToString(a.dims()), " and ", DimsToString(b.dims())));
    }
    const int64_t m = trans_a_ ? a.dims()[1] : a.dims()[0];
    const int64_t k = trans_a_ ? a.dims()[0] : a.dims()[1];
    const int64_t kb = trans_b_ ? b.dims()[1] : b.dims()[0];
    const int64_t n = trans_b_ ? b.dims()[0] : b.dims()[1];
    if (k != kb) {
      return ctx.Error(absl::StrCat("inner dimensions differ: A ", DimsToString(a.dims()), " transA=", trans_a_, ", B ",
                                    DimsToString(b.dims()), " transB=", trans_b_));
    }
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, {m, n}, a_in->type()));
    Tensor y_float = IsHalfLike(a_in->type()) ? Tensor::Allocate(DataType::kFloat, {m, n}) : *y_out;
    Tensor* y = &y_float;
    const bool use_c = c != nullptr && beta_ != 0.f;
    if (use_c) {
      auto shape = BroadcastShape(c->dims(), y->dims());
      if (!shape.ok() || *shape != y->dims()) {
        return ctx.Error(
            absl::StrCat("C of shape ", DimsToString(c->dims()), " cannot broadcast to ", DimsToString(y->dims())));
      }
    }
    absl::Status status = DispatchTypes<float, double, int32_t, int64_t, uint32_t, uint64_t>(a.type(), [&](auto tag) {
      using T = decltype(tag);
      T* out = y->mutable_data<T>();
      if (use_c) FillWithBroadcastC<T>(*c, m, n, out);  // then y = alpha*AB + beta*y
      if constexpr (std::is_same_v<T, float>) {
        return Sgemm(trans_a_, trans_b_, m, n, k, alpha_, a.data<float>(), a.dims()[1], b.data<float>(), b.dims()[1],
                     use_c ? beta_ : 0.f, out, n);
      } else {
        GemmReference<T>(trans_a_, trans_b_, m, n, k, static_cast<T>(alpha_), a.data<T>(), a.dims()[1], b.data<T>(),
                         b.dims()[1], use_c ? static_cast<T>(beta_) : T(0), out, n);
        return absl::OkStatus();
      }
    });
    if (!status.ok() || !IsHalfLike(a_in->type())) return status;
    DowncastFromFloat(y_float, *y_out);
    return absl::OkStatus();
  }

  std::vector<int> PackedConstantInputs() const override {
    return packed_ != nullptr ? std::vector<int>{1} : std::vector<int>{};
  }

 private:
  explicit Gemm(const OpKernelInfo& info)
      : trans_a_(info.AttrOr<int64_t>("transA", 0) != 0),
        trans_b_(info.AttrOr<int64_t>("transB", 0) != 0),
        alpha_(info.AttrOr<float>("alpha", 1.f)),
        beta_(info.AttrOr<float>("beta", 1.f)) {}

  bool trans_a_;
  bool trans_b_;
  float alpha_;
  float beta_;
  std::unique_ptr<DnnlMatMul> packed_;  // constant B (and bias row C): oneDNN's matmul
};

}  // namespace

void RegisterGemmKernels(KernelRegistry& r) {
  // Opsets 1-6 add a `broadcast` flag for C; unidirectional broadcasting (7+)
  // covers every C they allow.
  r.Register(KernelDefBuilder("Gemm")
                 .Since(1, 6)
                 .Types("T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16})
                 .Build(),
             MakeFactory<Gemm>());
  r.Register(KernelDefBuilder("Gemm")
                 .Since(7)
                 .Types("T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16,
                              DataType::kInt32, DataType::kInt64, DataType::kUint32, DataType::kUint64})
                 .Build(),
             MakeFactory<Gemm>());
}

}  // namespace onyx
