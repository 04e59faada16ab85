// MatMul with numpy semantics (see MatMulShape). float goes through oneDNN's
// sgemm, or, for a constant 2-D B (a weight: projections, language-model
// heads), oneDNN's matmul with B packed once (DnnlMatMul); float16/bfloat16
// multiply in float.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/dnnl_matmul.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/matmul_shape.h"

namespace onyx {
namespace {

class MatMul final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    std::unique_ptr<DnnlMatMul> packed;
    const Tensor* b = info.ConstantInput(1);
    if (b != nullptr && b->type() == DataType::kFloat && b->rank() == 2 && b->num_elements() > 0) {
      auto created = DnnlMatMul::Create(*b, nullptr, DnnlMatMul::Activation::kNone, false,
                                        DnnlMatMul::RowsHint(info.InputInfo(0)));
      if (!created.ok()) return info.Error(created.status().message());
      packed = *std::move(created);
    }
    return std::unique_ptr<OpKernel>(new MatMul(std::move(packed)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a_in, RequireInput(ctx, 0, "A"));
    ASSIGN_OR_RETURN(const Tensor* b_in, RequireInput(ctx, 1, "B"));
    const Tensor a = UpcastToFloat(*a_in);
    // A released B (no bytes, float) is read through packed_; the paths that
    // multiply without it fetch its bytes below.
    const Tensor b = UpcastToFloat(*b_in);
    if (a.type() != b.type()) {
      return ctx.Error(
          absl::StrCat("input types differ: ", DataTypeName(a_in->type()), " vs ", DataTypeName(b_in->type())));
    }
    auto shape = MatMulShape::Make(a.dims(), b.dims());
    if (!shape.ok()) return ctx.Error(shape.status().message());
    const MatMulShape& s = *shape;
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, s.out, a_in->type()));
    Tensor y = IsHalfLike(a_in->type()) ? Tensor::Allocate(DataType::kFloat, s.out) : *y_out;
    if (y.num_elements() == 0) return absl::OkStatus();
    const int64_t m = s.m, k = s.k, n = s.n;
    absl::Status status = DispatchTypes<float, double, int32_t, int64_t, uint32_t, uint64_t>(a.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* pa = a.data<T>();
      T* py = y.mutable_data<T>();
      auto gemm = [&](int64_t rows, const T* x, const T* w, T* out) -> absl::Status {
        if constexpr (std::is_same_v<T, float>) {
          return Sgemm(false, false, rows, n, k, 1.f, x, k, w, n, 0.f, out, n);
        } else {
          GemmReference<T>(false, false, rows, n, k, T(1), x, k, w, n, T(0), out, n);
          return absl::OkStatus();
        }
      };
      if constexpr (std::is_same_v<T, float>) {
        if (packed_ != nullptr && s.b_shared && b_in->type() == DataType::kFloat && k > 0) {
          return packed_->Run(pa, s.batches * m, py);
        }
      }
      Tensor b_bytes = b;
      if (packed_ != nullptr) {
        ASSIGN_OR_RETURN(b_bytes, packed_->WithBytes(b));
      }
      const T* pb = b_bytes.data<T>();
      if (s.b_shared) return gemm(s.batches * m, pa, pb, py);  // one large multiply
      auto one = [&](int64_t i) {
        return gemm(m, pa + s.a_offset[i] * m * k, pb + s.b_offset[i] * k * n, py + i * m * n);
      };
      // Many independent products (attention's heads): one per thread, each
      // on one thread, rather than every small product split across all of
      // them.
      const int threads = IntraOpThreads();
      if (threads > 1 && (s.batches >= 2 * threads || s.batches % threads == 0)) {
        std::vector<absl::Status> status(s.batches);
        ParallelFor(s.batches, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) status[i] = one(i);
        });
        for (const absl::Status& st : status) RETURN_IF_ERROR(st);
        return absl::OkStatus();
      }
      for (int64_t i = 0; i < s.batches; ++i) RETURN_IF_ERROR(one(i));
      return absl::OkStatus();
    });
    if (!status.ok() || !IsHalfLike(a_in->type())) return status;
    DowncastFromFloat(y, *y_out);
    return absl::OkStatus();
  }

  std::vector<int> PackedConstantInputs() const override {
    return packed_ != nullptr ? std::vector<int>{1} : std::vector<int>{};
  }

 private:
  explicit MatMul(std::unique_ptr<DnnlMatMul> packed) : packed_(std::move(packed)) {}
  std::unique_ptr<DnnlMatMul> packed_;  // nullptr: B is not a constant float matrix
};

}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MatMul")
                 .Since(1)
                 .Types("T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16,
                              DataType::kInt32, DataType::kInt64, DataType::kUint32, DataType::kUint64})
                 .Build(),
             MakeFactory<MatMul>());
}

}  // namespace onyx
