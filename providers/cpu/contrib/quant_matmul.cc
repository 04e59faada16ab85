// com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul: an 8-bit
// matrix product returned as float.
//
//   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?)
//     Y = ((A - a_zp) x (B - b_zp)) * (a_scale * b_scale) + bias
//   DynamicQuantizeMatMul(A float, B, b_scale, b_zp?, bias?)
//     A is first quantized to uint8 as ONNX Runtime does (range including 0,
//     scale = range / 255, or 1 for an all-zero A; zero point rounded half
//     to even), then as above.
//
// a_scale and a_zp are per tensor; b_scale and b_zp per tensor or per column
// of B. With a constant B whose zero point oneDNN's int8 matmul takes (int8
// with zero point 0, uint8 with 128) and a per-tensor A zero point of A's
// type, the product runs in int8 with the scale, bias and activation inside
// the primitive. Otherwise the zero-point-shifted operands, small integers,
// are multiplied as floats by sgemm (oneDNN's matmul with B packed once when
// B is constant): every product and partial sum is an integer below 2^24 in
// magnitude for any realistic K, so the float accumulation equals ONNX
// Runtime's int32 one.
//
// com.onyx FusedMatMulIntegerToFloat and FusedDynamicQuantizeMatMul (written
// by the optimizer) are the two with an optional `activation`, "Relu" or
// "Gelu".
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/math/dnnl_integer_matmul.h"
#include "providers/cpu/math/dnnl_matmul.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/math/matmul_shape.h"
#include "providers/cpu/math/quantize_util.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

float ByteValue(const Tensor& t, int64_t i) {
  return t.type() == DataType::kInt8 ? static_cast<float>(t.data<int8_t>()[i])
                                     : static_cast<float>(t.data<uint8_t>()[i]);
}

// Per-tensor or per-column values (scale or zero point) of B's N columns;
// {} with an error naming `name` otherwise.
absl::StatusOr<std::vector<float>> PerColumn(const Tensor* t, const char* name, int64_t n, float absent,
                                             bool is_zero_point) {
  if (t == nullptr) return std::vector<float>(n, absent);
  if (t->num_elements() != 1 && !(t->rank() == 1 && t->dims()[0] == n)) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar or hold one value per column of B (", n,
                                                   "), received ", DimsToString(t->dims())));
  }
  std::vector<float> out(n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i = t->num_elements() == 1 ? 0 : j;
    out[j] = is_zero_point ? ByteValue(*t, i) : t->data<float>()[i];
  }
  return out;
}

// B - b_zp as float, [..., K, N] with the zero point per column.
Tensor ShiftedB(const Tensor& b, const std::vector<float>& zp) {
  Tensor out = Tensor::Allocate(DataType::kFloat, b.dims());
  const int64_t n = zp.size();
  float* po = out.mutable_data<float>();
  for (int64_t i = 0; i < b.num_elements(); ++i) po[i] = ByteValue(b, i) - zp[i % n];
  return out;
}

class QuantMatMul final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, bool dynamic) {
    auto kernel = std::unique_ptr<QuantMatMul>(new QuantMatMul(dynamic));
    auto activation = DnnlMatMul::ParseActivation(info.AttrOr<std::string>("activation", ""));
    if (!activation.ok()) return info.Error(activation.status().message());
    kernel->activation_ = *activation;
    // A constant 2-D B with constant zero points is prepared once: in int8
    // (oneDNN, VNNI) when oneDNN takes its zero point, else shifted to float
    // and packed for sgemm.
    const Tensor* b = info.ConstantInput(1);
    const int zp_input = dynamic ? 3 : 5;
    const Tensor* b_zp = info.ConstantInput(zp_input);
    if (b != nullptr && b->rank() == 2 && Is8Bit(b->type()) && b->num_elements() > 0 &&
        (b_zp != nullptr || !info.HasInput(zp_input))) {
      auto int8 = DnnlIntegerMatMul::Create(*b, b_zp);
      if (int8.ok()) kernel->int8_ = *std::move(int8);
      if (!int8.ok() && !absl::IsUnimplemented(int8.status())) return info.Error(int8.status().message());
      if (kernel->int8_ == nullptr) {
        auto zp = PerColumn(b_zp, "b_zero_point", b->dims()[1], 0.f, true);
        if (!zp.ok()) return info.Error(zp.status().message());
        auto packed = DnnlMatMul::Create(ShiftedB(*b, *zp), nullptr, DnnlMatMul::Activation::kNone);
        if (packed.ok()) kernel->packed_ = *std::move(packed);
      }
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* a = ctx.Input(0);
    const Tensor* b = ctx.Input(1);
    if (a == nullptr || b == nullptr) return ctx.Error("A and B are required");
    if (!Is8Bit(b->type()) || (dynamic_ ? a->type() != DataType::kFloat : !Is8Bit(a->type()))) {
      return ctx.Error(absl::StrCat("A must be ", dynamic_ ? "float" : "int8 or uint8",
                                    " and B int8 or uint8; received ", DataTypeName(a->type()), " and ",
                                    DataTypeName(b->type())));
    }
    auto shape = MatMulShape::Make(a->dims(), b->dims());
    if (!shape.ok()) return ctx.Error(shape.status().message());
    const MatMulShape& s = *shape;
    const int scale_b_input = dynamic_ ? 2 : 3, zp_b_input = dynamic_ ? 3 : 5, bias_input = dynamic_ ? 4 : 6;
    ASSIGN_OR_RETURN(const Tensor* b_scale_t, FloatInput(ctx, scale_b_input, "b_scale"));
    auto b_scale = PerColumn(b_scale_t, "b_scale", s.n, 1.f, false);
    auto b_zp = PerColumn(ctx.Input(zp_b_input), "b_zero_point", s.n, 0.f, true);
    if (!b_scale.ok()) return ctx.Error(b_scale.status().message());
    if (!b_zp.ok()) return ctx.Error(b_zp.status().message());
    const Tensor* bias = nullptr;
    if (ctx.Input(bias_input) != nullptr) {
      ASSIGN_OR_RETURN(bias, FloatInput(ctx, bias_input, "bias"));
      RETURN_IF_ERROR(RequireVector(ctx, *bias, "bias", s.n));
    }
    // A's scale and zero point (per tensor), checked before any output.
    float a_scale = 1.f, a_zp = 0.f;
    if (!dynamic_) {
      ASSIGN_OR_RETURN(const Tensor* a_scale_t, FloatInput(ctx, 2, "a_scale"));
      const Tensor* a_zp_t = ctx.Input(4);
      if (a_scale_t->num_elements() != 1 || (a_zp_t != nullptr && a_zp_t->num_elements() != 1)) {
        return ctx.Error(absl::StrCat("a_scale and a_zero_point must be per tensor (one value each), received ",
                                      DimsToString(a_scale_t->dims()), " and ",
                                      a_zp_t == nullptr ? "none" : DimsToString(a_zp_t->dims())));
      }
      if (a_zp_t != nullptr && a_zp_t->type() != a->type()) {
        return ctx.Error(absl::StrCat("a_zero_point must have A's element type ", DataTypeName(a->type()),
                                      ", received ", DataTypeName(a_zp_t->type())));
      }
      a_scale = a_scale_t->data<float>()[0];
      a_zp = a_zp_t != nullptr ? ByteValue(*a_zp_t, 0) : 0.f;
    }

    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, s.out, DataType::kFloat));
    if (y->num_elements() == 0) return absl::OkStatus();
    float* py = y->mutable_data<float>();
    if (int8_ != nullptr && s.b_shared && int8_->k() == s.k && int8_->n() == s.n && s.k > 0) {
      return RunInt8(ctx, *a, s, a_scale, a_zp, *b_scale, bias, py);
    }

    // A - a_zp as float.
    Tensor a_shifted = Tensor::Allocate(DataType::kFloat, a->dims());
    if (dynamic_) {
      a_scale = QuantizeDynamic(*a, a_shifted.mutable_data<float>());
    } else {
      float* pa = a_shifted.mutable_data<float>();
      for (int64_t i = 0; i < a->num_elements(); ++i) pa[i] = ByteValue(*a, i) - a_zp;
    }

    const float* pa = a_shifted.data<float>();
    // B and its zero point were constant at creation, so packed_ holds them.
    const bool packed_ok = packed_ != nullptr && s.b_shared && packed_->k() == s.k && packed_->n() == s.n;
    if (s.k == 0) {
      std::fill(py, py + y->num_elements(), 0.f);
    } else if (packed_ok) {
      absl::Status status = packed_->Run(pa, s.batches * s.m, py);
      if (!status.ok()) return ctx.Error(status.message());
    } else {
      const Tensor b_shifted = ShiftedB(*b, *b_zp);
      const float* pb = b_shifted.data<float>();
      for (int64_t i = 0; i < s.batches; ++i) {
        RETURN_IF_ERROR(Sgemm(false, false, s.m, s.n, s.k, 1.f, pa + s.a_offset[i] * s.m * s.k, s.k,
                              pb + s.b_offset[i] * s.k * s.n, s.n, 0.f, py + i * s.m * s.n, s.n));
      }
    }
    const std::vector<float> multiplier = Multipliers(a_scale, *b_scale);
    const float* pbias = bias ? bias->data<float>() : nullptr;
    const int64_t n = s.n;
    ParallelFor(y->num_elements() / n, std::max<int64_t>(1, 16384 / n), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        float* row = py + r * n;
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] * multiplier[j] + (pbias != nullptr ? pbias[j] : 0.f);
      }
    });
    absl::Status status = DnnlMatMul::ApplyActivation(activation_, py, y->num_elements());
    if (!status.ok()) return ctx.Error(status.message());
    return absl::OkStatus();
  }

 private:
  explicit QuantMatMul(bool dynamic) : dynamic_(dynamic) {}

  static std::vector<float> Multipliers(float a_scale, const std::vector<float>& b_scale) {
    std::vector<float> multiplier(b_scale.size());
    for (size_t j = 0; j < b_scale.size(); ++j) multiplier[j] = a_scale * b_scale[j];
    return multiplier;
  }

  // The int8 product with the scale, bias and activation inside oneDNN's
  // primitive. DynamicQuantizeMatMul first quantizes A to uint8 as ONNX
  // Runtime does (range including 0, scale = range / 255 or 1 for an
  // all-zero A, zero point rounded half to even).
  absl::Status RunInt8(OpKernelContext& ctx, const Tensor& a, const MatMulShape& s, float a_scale, float a_zp,
                       const std::vector<float>& b_scale, const Tensor* bias, float* py) const {
    const int64_t rows = s.batches * s.m;
    Tensor q;
    const Tensor* a8 = &a;
    if (dynamic_) {
      const float* x = a.data<float>();
      const int64_t n = a.num_elements();
      float lo = 0.f, hi = 0.f;
      ParallelRangeWithZero(x, n, &lo, &hi);
      a_scale = hi == lo ? 1.f : (hi - lo) / 255.f;
      a_zp = std::nearbyint(std::max(0.f, std::min(255.f, 0.f - lo / a_scale)));
      uint8_t* buffer = KernelScratch<uint8_t>(kScratchConvSource, n);
      if (buffer == nullptr) return ctx.Error(absl::StrCat("cannot allocate ", n, " bytes for the quantized A"));
      ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
        simd::QuantizeUint8(x + begin, end - begin, a_scale, a_zp, buffer + begin);
      });
      q = Tensor::Wrap(DataType::kUint8, a.dims(), buffer);
      a8 = &q;
    }
    const std::vector<float> multiplier = Multipliers(a_scale, b_scale);
    DnnlIntegerMatMul::FloatEpilogue epilogue;
    epilogue.scales = multiplier.data();
    epilogue.bias = bias != nullptr ? bias->data<float>() : nullptr;
    epilogue.activation = activation_;
    absl::Status status = int8_->RunToFloat(*a8, rows, static_cast<int32_t>(a_zp), epilogue, py);
    return status.ok() ? status : ctx.Error(status.message());
  }

  // Quantizes float A to uint8 as ONNX Runtime's DynamicQuantizeMatMul does
  // and writes q - zero_point as float; returns the scale.
  static float QuantizeDynamic(const Tensor& a, float* shifted) {
    const float* x = a.data<float>();
    const int64_t n = a.num_elements();
    float lo = 0.f, hi = 0.f;
    ParallelRangeWithZero(x, n, &lo, &hi);
    const float scale = hi == lo ? 1.f : (hi - lo) / 255.f;
    const float zp = std::nearbyint(std::max(0.f, std::min(255.f, 0.f - lo / scale)));
    const float qmin = -zp, qmax = 255.f - zp;
    ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) shifted[i] = std::nearbyint(std::min(std::max(x[i] / scale, qmin), qmax));
    });
    return scale;
  }

  bool dynamic_;
  DnnlMatMul::Activation activation_ = DnnlMatMul::Activation::kNone;
  std::unique_ptr<DnnlIntegerMatMul> int8_;  // constant B in int8, when oneDNN takes its zero point
  std::unique_ptr<DnnlMatMul> packed_;       // else constant B - b_zp as float, packed
};

template <bool kDynamic>
KernelFactory QuantFactory() {
  return [](const OpKernelInfo& info) { return QuantMatMul::Create(info, kDynamic); };
}

}  // namespace

void RegisterContribQuantMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MatMulIntegerToFloat")
                 .Domain(kMicrosoftDomain)
                 .Since(1)
                 .Types("T3", {DataType::kFloat})
                 .Build(),
             QuantFactory<false>());
  r.Register(MicrosoftFloatKernel("DynamicQuantizeMatMul", "T1"), QuantFactory<true>());
  // The optimizer's form of MatMulInteger -> Cast -> Mul (-> Add) (->
  // activation): MatMulIntegerToFloat's inputs plus `activation`.
  r.Register(KernelDefBuilder("FusedMatMulIntegerToFloat").Domain(kOnyxDomain).Build(), QuantFactory<false>());
  r.Register(KernelDefBuilder("FusedDynamicQuantizeMatMul").Domain(kOnyxDomain).Build(), QuantFactory<true>());
}

}  // namespace onyx
