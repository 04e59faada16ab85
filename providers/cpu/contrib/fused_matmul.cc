// com.microsoft FusedMatMul(A, B): Y = alpha * op(A) x op(B) with numpy batch
// broadcasting, where op transposes the last two dimensions (transA, transB)
// after transBatchA / transBatchB have moved the operand's first dimension
// behind its batch dimensions ([M, b..., K] read as [b..., M, K], ONNX
// Runtime's MatMulComputeHelper). float.
//
// A constant 2-D B (the usual weight) is packed once into oneDNN's matmul
// layout with alpha and transB folded in, and A's rows run through it in one
// primitive; otherwise every batch is one sgemm with the transposes as
// leading-dimension flags.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/math/dnnl_matmul.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/math/matmul_shape.h"
#include "providers/cpu/tensor/copy_util.h"

namespace onyx {
namespace {

// `t` with its first dimension moved behind the batch dimensions:
// [d0, b..., dl] -> [b..., d0, dl], copied.
Tensor MoveFirstBehindBatch(const Tensor& t) {
  const int64_t rank = t.rank();
  const Dims src_strides = StridesOf(t.dims());
  Dims dims, strides;
  for (int64_t i = 1; i < rank - 1; ++i) {
    dims.push_back(t.dims()[i]);
    strides.push_back(src_strides[i]);
  }
  dims.push_back(t.dims()[0]);
  strides.push_back(src_strides[0]);
  dims.push_back(t.dims()[rank - 1]);
  strides.push_back(src_strides[rank - 1]);
  Tensor out = Tensor::Allocate(t.type(), dims);
  StridedCopy(t.type(), t.raw(), strides, out.mutable_raw(), StridesOf(dims), dims);
  return out;
}

// Dims as multiplied: the last two swapped when transposed (rank >= 2).
Dims Logical(const Dims& dims, bool trans) {
  Dims d = dims;
  if (trans && d.size() >= 2) std::swap(d[d.size() - 1], d[d.size() - 2]);
  return d;
}

class FusedMatMul final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<FusedMatMul>(new FusedMatMul(info));
    const Tensor* b = info.ConstantInput(1);
    if (b != nullptr && b->type() == DataType::kFloat && b->rank() == 2 && b->num_elements() > 0 &&
        !kernel->trans_batch_b_) {
      // Packed weights: B' = alpha * op(B) as [K, N].
      const int64_t rows = b->dims()[0], cols = b->dims()[1];
      const bool t = kernel->trans_b_;
      Tensor packed = Tensor::Allocate(DataType::kFloat, {t ? cols : rows, t ? rows : cols});
      const float* src = b->data<float>();
      float* dst = packed.mutable_data<float>();
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          dst[t ? c * rows + r : r * cols + c] = kernel->alpha_ * src[r * cols + c];
        }
      }
      auto dnnl = DnnlMatMul::Create(packed, nullptr, DnnlMatMul::Activation::kNone, false,
                                     kernel->trans_a_ ? 0 : DnnlMatMul::RowsHint(info.InputInfo(0)));
      if (!dnnl.ok()) return info.Error(dnnl.status().message());
      kernel->dnnl_ = *std::move(dnnl);
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a_in, FloatInput(ctx, 0, "A"));
    ASSIGN_OR_RETURN(const Tensor* b_in, FloatInput(ctx, 1, "B"));
    if ((trans_batch_a_ || trans_batch_b_) && (a_in->rank() < 3 || a_in->rank() != b_in->rank())) {
      return ctx.Error("transBatchA and transBatchB need A and B of one rank >= 3, received " +
                       DimsToString(a_in->dims()) + " and " + DimsToString(b_in->dims()));
    }
    const Tensor a = trans_batch_a_ ? MoveFirstBehindBatch(*a_in) : *a_in;
    const Tensor b = trans_batch_b_ ? MoveFirstBehindBatch(*b_in) : *b_in;
    const bool ta = trans_a_ && a.rank() >= 2, tb = trans_b_ && b.rank() >= 2;
    auto shape = MatMulShape::Make(Logical(a.dims(), ta), Logical(b.dims(), tb));
    if (!shape.ok()) return ctx.Error(shape.status().message());
    const MatMulShape& s = *shape;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, s.out, DataType::kFloat));
    if (y->num_elements() == 0) return absl::OkStatus();
    float* py = y->mutable_data<float>();
    if (s.k == 0) {
      std::fill(py, py + y->num_elements(), 0.f);
      return absl::OkStatus();
    }
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    if (dnnl_ != nullptr && !ta && s.b_shared && dnnl_->k() == s.k && dnnl_->n() == s.n) {
      absl::Status status = dnnl_->Run(pa, s.batches * s.m, py);
      return status.ok() ? status : ctx.Error(status.message());
    }
    const int64_t lda = ta ? s.m : s.k, ldb = tb ? s.k : s.n;
    if (s.b_shared && !ta) {  // one product over all of A's rows
      return Sgemm(false, tb, s.batches * s.m, s.n, s.k, alpha_, pa, lda, pb, ldb, 0.f, py, s.n);
    }
    for (int64_t i = 0; i < s.batches; ++i) {
      RETURN_IF_ERROR(Sgemm(ta, tb, s.m, s.n, s.k, alpha_, pa + s.a_offset[i] * s.m * s.k, lda,
                            pb + s.b_offset[i] * s.k * s.n, ldb, 0.f, py + i * s.m * s.n, s.n));
    }
    return absl::OkStatus();
  }

  // Without transA every product with the constant B runs packed; with it,
  // some read B itself.
  std::vector<int> PackedConstantInputs() const override {
    return dnnl_ != nullptr && !trans_a_ ? std::vector<int>{1} : std::vector<int>{};
  }

 private:
  explicit FusedMatMul(const OpKernelInfo& info)
      : alpha_(info.AttrOr<float>("alpha", 1.f)),
        trans_a_(info.AttrOr<int64_t>("transA", 0) != 0),
        trans_b_(info.AttrOr<int64_t>("transB", 0) != 0),
        trans_batch_a_(info.AttrOr<int64_t>("transBatchA", 0) != 0),
        trans_batch_b_(info.AttrOr<int64_t>("transBatchB", 0) != 0) {}

  float alpha_;
  bool trans_a_, trans_b_, trans_batch_a_, trans_batch_b_;
  std::unique_ptr<DnnlMatMul> dnnl_;  // constant B, packed with alpha and transB applied
};

}  // namespace

void RegisterContribMatMulKernels(KernelRegistry& r) {
  r.Register(MicrosoftFloatKernel("FusedMatMul"), MakeFactory<FusedMatMul>());
}

}  // namespace onyx
