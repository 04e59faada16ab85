// com.microsoft QLinearAdd, QLinearMul (numpy broadcasting), QLinearSigmoid
// and QLinearLeakyRelu, on int8 or uint8 with per-tensor parameters, computed
// the way ONNX Runtime's MLAS kernels compute them so that the 8-bit results
// match it exactly:
//
//   QLinearAdd: with rA = sA / sC, rB = sB / sC and
//     f = zC - (rA * zA + rB * zB), C = round(A * rA + (B * rB + f)), each
//     product-sum fused; where one operand is constant along the innermost
//     dimension it is folded into f first (MLAS's scalar-operand kernels).
//   QLinearMul: C = round(float((A - zA) * (B - zB)) * (sA * sB / sC) + zC).
//   QLinearSigmoid / QLinearLeakyRelu: a 256-entry table of
//     quantize(f(dequantize(x))).
// Rounding is half to even, then saturation to the 8-bit range.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/contrib/qlinear_util.h"
#include "providers/cpu/math/broadcast.h"

namespace onyx {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

template <typename Q>
void AddRow(const Q* a, int64_t a_step, const Q* b, int64_t b_step, int64_t n, const QuantParams& pa,
            const QuantParams& pb, const QuantParams& pc, Q* c) {
  const float ra = pa.scale / pc.scale, rb = pb.scale / pc.scale;
  const float zc = static_cast<float>(pc.zero_point);
  const float za = static_cast<float>(pa.zero_point), zb = static_cast<float>(pb.zero_point);
  if (a_step != 0 && b_step != 0) {
    const float fixed = zc - std::fma(ra, za, rb * zb);
    for (int64_t i = 0; i < n; ++i) {
      const float v = std::fma(static_cast<float>(a[i]), ra, std::fma(static_cast<float>(b[i]), rb, fixed));
      c[i] = SaturateRoundHalfEven<Q>(v);
    }
  } else if (a_step == 0 && b_step != 0) {  // MLAS: B is the vector, A the scalar
    const float fixed = (zc - std::fma(rb, zb, ra * za)) + static_cast<float>(a[0]) * ra;
    for (int64_t i = 0; i < n; ++i) c[i] = SaturateRoundHalfEven<Q>(std::fma(static_cast<float>(b[i]), rb, fixed));
  } else {
    const float fixed = (zc - std::fma(ra, za, rb * zb)) + static_cast<float>(b[0]) * rb;
    for (int64_t i = 0; i < n; ++i) {
      c[i] = SaturateRoundHalfEven<Q>(std::fma(static_cast<float>(a[i * (a_step != 0)]), ra, fixed));
    }
  }
}

template <typename Q>
void MulRow(const Q* a, int64_t a_step, const Q* b, int64_t b_step, int64_t n, const QuantParams& pa,
            const QuantParams& pb, const QuantParams& pc, Q* c) {
  const float ratio = pa.scale * pb.scale / pc.scale;
  const float zc = static_cast<float>(pc.zero_point);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prod =
        (static_cast<int32_t>(a[i * a_step]) - pa.zero_point) * (static_cast<int32_t>(b[i * b_step]) - pb.zero_point);
    c[i] = SaturateRoundHalfEven<Q>(static_cast<float>(prod) * ratio + zc);
  }
}

class QLinearBinary final : public OpKernel {
 public:
  QLinearBinary(const OpKernelInfo&, bool add) : add_(add) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* a = ctx.Input(0);
    const Tensor* b = ctx.Input(3);
    if (a == nullptr || b == nullptr || !Is8Bit(a->type()) || a->type() != b->type()) {
      return ctx.Error("A and B must be int8 or uint8 tensors of one element type");
    }
    ASSIGN_OR_RETURN(QuantParams pa, ReadQuantParams(ctx, 0, 1, 2));
    ASSIGN_OR_RETURN(QuantParams pb, ReadQuantParams(ctx, 3, 4, 5));
    ASSIGN_OR_RETURN(QuantParams pc, ReadQuantParams(ctx, 0, 6, 7));
    auto dims = BroadcastShape(a->dims(), b->dims());
    if (!dims.ok()) return ctx.Error(dims.status().message());
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, *dims, a->type()));
    const std::vector<int64_t> as = BroadcastStrides(a->dims(), *dims), bs = BroadcastStrides(b->dims(), *dims);
    auto run = [&](auto tag) {
      using Q = decltype(tag);
      const Q* pa_data = static_cast<const Q*>(a->raw());
      const Q* pb_data = static_cast<const Q*>(b->raw());
      Q* pc_data = static_cast<Q*>(y->mutable_raw());
      ForEachBroadcastRow(*dims, as, bs,
                          [&](int64_t out, int64_t a_off, int64_t b_off, int64_t n, int64_t a_step, int64_t b_step) {
        if (add_) {
          AddRow<Q>(pa_data + a_off, a_step, pb_data + b_off, b_step, n, pa, pb, pc, pc_data + out);
        } else {
          MulRow<Q>(pa_data + a_off, a_step, pb_data + b_off, b_step, n, pa, pb, pc, pc_data + out);
        }
      });
    };
    if (a->type() == DataType::kInt8) {
      run(int8_t{});
    } else {
      run(uint8_t{});
    }
    return absl::OkStatus();
  }

 private:
  bool add_;
};

// A 256-entry table from the input byte to the output byte.
class QLinearLookup final : public OpKernel {
 public:
  enum class Fn { kSigmoid, kLeakyRelu };
  QLinearLookup(const OpKernelInfo& info, Fn fn) : fn_(fn), alpha_(info.AttrOr<float>("alpha", 0.01f)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr || !Is8Bit(x->type())) return ctx.Error("X must be an int8 or uint8 tensor");
    ASSIGN_OR_RETURN(QuantParams px, ReadQuantParams(ctx, 0, 1, 2));
    ASSIGN_OR_RETURN(QuantParams py, ReadQuantParams(ctx, 0, 3, 4));
    uint8_t table[256];
    const float alpha = alpha_;
    auto f = [&](float v) {
      if (fn_ == Fn::kLeakyRelu) return v >= 0.f ? v : alpha * v;
      return 1.f / (1.f + std::exp(-v));
    };
    if (x->type() == DataType::kInt8) {
      BuildLookupTable<int8_t>(px, py, f, table);
    } else {
      BuildLookupTable<uint8_t>(px, py, f, table);
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    const uint8_t* in = static_cast<const uint8_t*>(x->raw());
    uint8_t* out = static_cast<uint8_t*>(y->mutable_raw());
    ParallelFor(x->num_elements(), 65536, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = table[in[i]];
    });
    return absl::OkStatus();
  }

 private:
  Fn fn_;
  float alpha_;
};

KernelFactory Binary(bool add) {
  return [add](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new QLinearBinary(info, add));
  };
}

KernelFactory Lookup(QLinearLookup::Fn fn) {
  return [fn](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new QLinearLookup(info, fn));
  };
}

KernelDef Int8Def(const char* op) {
  return KernelDefBuilder(op).Domain(kMicrosoftDomain).Since(1).Types("T", {DataType::kInt8, DataType::kUint8}).Build();
}

}  // namespace

void RegisterQLinearElementwiseKernels(KernelRegistry& r) {
  r.Register(Int8Def("QLinearAdd"), Binary(true));
  r.Register(Int8Def("QLinearMul"), Binary(false));
  r.Register(Int8Def("QLinearSigmoid"), Lookup(QLinearLookup::Fn::kSigmoid));
  r.Register(Int8Def("QLinearLeakyRelu"), Lookup(QLinearLookup::Fn::kLeakyRelu));
}

}  // namespace onyx
