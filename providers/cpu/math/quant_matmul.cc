// Quantized matrix multiplies: MatMulInteger (int32 output), QLinearMatMul
// (requantized 8-bit output), and DynamicQuantizeLinear (float -> uint8 with a
// computed scale and zero point). Products accumulate in int32: by oneDNN's
// int8 matmul for a constant B it takes (dnnl_integer_matmul.h), else by the
// reference loop.
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/dnnl_integer_matmul.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/matmul_shape.h"
#include "providers/cpu/math/quantize_util.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// int32 product of (A - a_zp) and (B - b_zp); a_zp is per tensor or per row of
// A, b_zp per tensor or per column of B.
absl::StatusOr<std::vector<int32_t>> IntegerProduct(const OpKernelContext& ctx, const Tensor& a, const Tensor& b,
                                                    const Tensor* a_zp, const Tensor* b_zp, const MatMulShape& s) {
  if (!Is8Bit(a.type()) || !Is8Bit(b.type())) {
    return ctx.Error(absl::StrCat("A and B must be int8 or uint8, received ", DataTypeName(a.type()), " and ",
                                  DataTypeName(b.type())));
  }
  const std::vector<int32_t> azp = ZeroPoints(a_zp), bzp = ZeroPoints(b_zp);
  if (azp.size() != 1 && static_cast<int64_t>(azp.size()) != s.m) {
    return ctx.Error(absl::StrCat("a_zero_point has ", azp.size(), " values, expected 1 or ", s.m));
  }
  if (bzp.size() != 1 && static_cast<int64_t>(bzp.size()) != s.n) {
    return ctx.Error(absl::StrCat("b_zero_point has ", bzp.size(), " values, expected 1 or ", s.n));
  }
  std::vector<int32_t> av = Dequantize8(a, azp, s.k);  // per row: index (i / K) % M
  std::vector<int32_t> bv = Dequantize8(b, bzp, 1);    // per column: index i % N
  std::vector<int32_t> out(s.batches * s.m * s.n);
  for (int64_t i = 0; i < s.batches; ++i) {
    GemmReference<int32_t>(false, false, s.m, s.n, s.k, 1, av.data() + s.a_offset[i] * s.m * s.k, s.k,
                           bv.data() + s.b_offset[i] * s.k * s.n, s.n, 0, out.data() + i * s.m * s.n, s.n);
  }
  return out;
}

// The oneDNN int8 product of A and the constant B, when it took B and A is
// 8-bit with a scalar zero point of its own type: y holds rows x N int32
// values and `dims` the product's shape. False: the caller's reference path.
struct FastProduct {
  Dims dims;
  int32_t* y = nullptr;
};

bool FastProductApplies(const DnnlIntegerMatMul* dnnl, const Tensor& a, const Tensor* a_zp) {
  return dnnl != nullptr && Is8Bit(a.type()) && a.rank() >= 1 && a.dims().back() == dnnl->k() &&
         (a_zp == nullptr || (a_zp->num_elements() == 1 && a_zp->type() == a.type()));
}

Dims ProductDims(const DnnlIntegerMatMul& dnnl, const Tensor& a) {
  Dims dims(a.dims().begin(), a.dims().end() - 1);
  dims.push_back(dnnl.n());
  return dims;
}

// Creates the oneDNN product for a constant 2-D B whose zero point it takes.
absl::StatusOr<std::unique_ptr<DnnlIntegerMatMul>> MaybeDnnl(const OpKernelInfo& info, int b_index, int zp_index) {
  const Tensor* b = info.ConstantInput(b_index);
  const Tensor* b_zp = info.HasInput(zp_index) ? info.ConstantInput(zp_index) : nullptr;
  if (b == nullptr || (info.HasInput(zp_index) && b_zp == nullptr)) return std::unique_ptr<DnnlIntegerMatMul>();
  auto dnnl = DnnlIntegerMatMul::Create(*b, b_zp);
  if (absl::IsUnimplemented(dnnl.status())) return std::unique_ptr<DnnlIntegerMatMul>();
  return dnnl;
}

class MatMulInteger final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<MatMulInteger>(new MatMulInteger());
    auto dnnl = MaybeDnnl(info, 1, 3);
    if (!dnnl.ok()) return info.Error(dnnl.status().message());
    kernel->dnnl_ = *std::move(dnnl);
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0, "A"));
    ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1, "B"));
    if (FastProductApplies(dnnl_.get(), *a, ctx.Input(2))) {
      ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, ProductDims(*dnnl_, *a), DataType::kInt32));
      const int32_t zp = ctx.Input(2) == nullptr ? 0 : static_cast<int32_t>(ScalarAsInt64(*ctx.Input(2)));
      absl::Status s = dnnl_->Run(*a, a->num_elements() / dnnl_->k(), zp, y->mutable_data<int32_t>());
      return s.ok() ? s : ctx.Error(s.message());
    }
    auto shape = MatMulShape::Make(a->dims(), b->dims());
    if (!shape.ok()) return ctx.Error(shape.status().message());
    ASSIGN_OR_RETURN(std::vector<int32_t> prod, IntegerProduct(ctx, *a, *b, ctx.Input(2), ctx.Input(3), *shape));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, shape->out, DataType::kInt32));
    std::copy(prod.begin(), prod.end(), y->mutable_data<int32_t>());
    return absl::OkStatus();
  }

 private:
  MatMulInteger() = default;
  std::unique_ptr<DnnlIntegerMatMul> dnnl_;  // nullptr: the reference product
};

class QLinearMatMul final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<QLinearMatMul>(new QLinearMatMul());
    auto dnnl = MaybeDnnl(info, 3, 5);
    if (!dnnl.ok()) return info.Error(dnnl.status().message());
    kernel->dnnl_ = *std::move(dnnl);
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    static const char* kNames[] = {"a",       "a_scale",      "a_zero_point", "b",
                                   "b_scale", "b_zero_point", "y_scale",      "y_zero_point"};
    const Tensor* in[8];
    for (int i = 0; i < 8; ++i) {
      ASSIGN_OR_RETURN(in[i], RequireInput(ctx, i, kNames[i]));
    }
    const Tensor &a = *in[0], &b = *in[3];
    const std::vector<float> a_scale = Scales(*in[1]), b_scale = Scales(*in[4]), y_scale = Scales(*in[6]);
    // The int32 product: oneDNN's (per-tensor a_scale only), or the reference.
    Dims out_dims;
    int64_t m = 0, n = 0;
    const int32_t* prod = nullptr;
    std::vector<int32_t> reference;
    if (a_scale.size() == 1 && FastProductApplies(dnnl_.get(), a, in[2])) {
      out_dims = ProductDims(*dnnl_, a);
      n = dnnl_->n();
      m = a.num_elements() / dnnl_->k();
      int32_t* buffer = KernelScratch<int32_t>(kScratchAccumulator, m * n);
      if (buffer == nullptr) return ctx.Error("cannot allocate the int32 accumulator");
      absl::Status s = dnnl_->Run(a, m, static_cast<int32_t>(ScalarAsInt64(*in[2])), buffer);
      if (!s.ok()) return ctx.Error(s.message());
      prod = buffer;
    } else {
      auto shape = MatMulShape::Make(a.dims(), b.dims());
      if (!shape.ok()) return ctx.Error(shape.status().message());
      ASSIGN_OR_RETURN(reference, IntegerProduct(ctx, a, b, in[2], in[5], *shape));
      out_dims = shape->out;
      m = shape->m;
      n = shape->n;
      prod = reference.data();
    }
    if ((a_scale.size() != 1 && static_cast<int64_t>(a_scale.size()) != m) ||
        (b_scale.size() != 1 && static_cast<int64_t>(b_scale.size()) != n) || y_scale.size() != 1) {
      return ctx.Error(absl::StrCat("scales must be scalars or per row/column: a_scale ", a_scale.size(), ", b_scale ",
                                    b_scale.size(), ", y_scale ", y_scale.size(), " values"));
    }
    const Tensor& y_zp = *in[7];
    if (!Is8Bit(y_zp.type()) || y_zp.num_elements() != 1) {
      return ctx.Error("y_zero_point must be an int8 or uint8 scalar");
    }
    const int32_t zp = static_cast<int32_t>(ScalarAsInt64(y_zp));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, y_zp.type()));
    const int64_t total = NumElements(out_dims);
    auto requantize = [&](auto* out) {
      using Q = std::remove_pointer_t<decltype(out)>;
      ParallelFor(total, 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t row = (i / n) % m, col = i % n;
          const float scale =
              a_scale[a_scale.size() == 1 ? 0 : row] * b_scale[b_scale.size() == 1 ? 0 : col] / y_scale[0];
          out[i] = SaturateRound<Q>(static_cast<float>(prod[i]) * scale, zp);
        }
      });
    };
    if (y_zp.type() == DataType::kInt8) requantize(y->mutable_data<int8_t>());
    else requantize(y->mutable_data<uint8_t>());
    return absl::OkStatus();
  }

 private:
  QLinearMatMul() = default;
  std::unique_ptr<DnnlIntegerMatMul> dnnl_;  // nullptr: the reference product
};

class DynamicQuantizeLinear final : public OpKernel {
 public:
  explicit DynamicQuantizeLinear(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "x"));
    if (x_in->type() != DataType::kFloat) {
      return ctx.Error(absl::StrCat("x must be float, received ", DataTypeName(x_in->type())));
    }
    const float* x = x_in->data<float>();
    const int64_t n = x_in->num_elements();
    float lo = 0.f, hi = 0.f;
    ParallelRangeWithZero(x, n, &lo, &hi);
    const float scale = (hi - lo) / 255.f;
    const uint8_t zp = scale == 0.f ? 0 : SaturateRound<uint8_t>(-lo / scale, 0);
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x_in->dims(), DataType::kUint8));
    ASSIGN_OR_RETURN(Tensor* y_scale, ctx.Output(1, {}, DataType::kFloat));
    ASSIGN_OR_RETURN(Tensor* y_zp, ctx.Output(2, {}, DataType::kUint8));
    uint8_t* py = y->mutable_data<uint8_t>();
    if (scale == 0.f) {
      std::fill(py, py + n, zp);
    } else {
      ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
        simd::QuantizeUint8(x + begin, end - begin, scale, static_cast<float>(zp), py + begin);
      });
    }
    y_scale->mutable_data<float>()[0] = scale;
    y_zp->mutable_data<uint8_t>()[0] = zp;
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterQuantMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MatMulInteger").Since(10).Build(), MakeFactory<MatMulInteger>());
  r.Register(KernelDefBuilder("QLinearMatMul").Since(10).Build(), MakeFactory<QLinearMatMul>());
  r.Register(KernelDefBuilder("DynamicQuantizeLinear").Since(11).Build(), MakeFactory<DynamicQuantizeLinear>());
}

}  // namespace onyx
