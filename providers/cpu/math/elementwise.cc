// Element-wise arithmetic (Add, Sub, Mul, Div) with numpy broadcasting.
// float16/bfloat16 compute in float; float rows run simd::ArithRows (the
// CPU's widest vectors, the same IEEE results).
#include <cmath>
#include <cstdint>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/simd/row_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

constexpr int64_t kNoAxis = INT64_MIN;

template <Arith op, typename T>
inline T Apply(T a, T b) {
  if constexpr (op == Arith::kAdd) return a + b;
  if constexpr (op == Arith::kSub) return a - b;
  if constexpr (op == Arith::kMul) return a * b;
  if constexpr (op == Arith::kDiv) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T(0);  // undefined in ONNX; never trap
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
      }
      return static_cast<T>(a / b);
    }
    return a / b;
  }
}

// Output dims with both operands' strides (0 where broadcast), adjacent
// dims merged wherever each operand runs on contiguously or stays
// broadcast: a channels-last tensor times a per-channel gate becomes
// [pixels, channels], one operand's rows 0 apart.
struct CollapsedBroadcast {
  std::vector<int64_t> dims, a, b;
};

CollapsedBroadcast Collapse(absl::Span<const int64_t> out, const std::vector<int64_t>& as,
                            const std::vector<int64_t>& bs) {
  CollapsedBroadcast c;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;  // strides of a size-1 dim never matter
    if (!c.dims.empty()) {
      const int64_t d = out[i];
      auto joins = [&](int64_t outer, int64_t inner) { return outer == inner * d || (outer == 0 && inner == 0); };
      if (joins(c.a.back(), as[i]) && joins(c.b.back(), bs[i])) {
        c.dims.back() *= d;
        c.a.back() = as[i];
        c.b.back() = bs[i];
        continue;
      }
    }
    c.dims.push_back(out[i]);
    c.a.push_back(as[i]);
    c.b.push_back(bs[i]);
  }
  return c;
}

// out = a op b over float tensors in vector rows (simd::ArithRows): the
// innermost merged dim is the row, the next one the rows of one call.
template <Arith op>
void FloatArith(const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr simd::Arith kOp = op == Arith::kAdd   ? simd::Arith::kAdd
                              : op == Arith::kSub ? simd::Arith::kSub
                              : op == Arith::kMul ? simd::Arith::kMul
                                                  : simd::Arith::kDiv;
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out.mutable_data<float>();
  if (out.num_elements() == 0) return;
  const CollapsedBroadcast c =
      Collapse(out.dims(), BroadcastStrides(a.dims(), out.dims()), BroadcastStrides(b.dims(), out.dims()));
  const size_t k = c.dims.size();
  if (k == 0) {  // one element
    po[0] = Apply<op>(pa[0], pb[0]);
    return;
  }
  // After merging, the innermost dim advances each operand by 1 or 0.
  const int64_t inner = c.dims[k - 1], a_step = c.a[k - 1], b_step = c.b[k - 1];
  const int64_t per_outer = k >= 2 ? c.dims[k - 2] : 1;
  const int64_t a_ld = k >= 2 ? c.a[k - 2] : 0, b_ld = k >= 2 ? c.b[k - 2] : 0;
  if (k == 1) {  // whole tensors or a scalar operand: split the row itself
    ParallelFor(inner, 16384, [&](int64_t begin, int64_t end) {
      simd::ArithRows(kOp, pa + begin * a_step, 0, a_step, pb + begin * b_step, 0, b_step, po + begin, 1, end - begin);
    });
    return;
  }
  const int64_t rows = out.num_elements() / inner;
  ParallelFor(rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end;) {
      const int64_t o = r / per_outer, m = r % per_outer, run = std::min(end - r, per_outer - m);
      int64_t a_off = m * a_ld, b_off = m * b_ld;
      for (int64_t rest = o, d = static_cast<int64_t>(k) - 3; d >= 0; --d) {
        const int64_t index = rest % c.dims[d];
        rest /= c.dims[d];
        a_off += index * c.a[d];
        b_off += index * c.b[d];
      }
      simd::ArithRows(kOp, pa + a_off, a_ld, a_step, pb + b_off, b_ld, b_step, po + r * inner, run, inner);
      r += run;
    }
  });
}

// Before opset 7, B broadcast only when `broadcast` = 1, aligned with A's
// dims from `axis` on (default: A's trailing dims): B [C] against A [N, C, H, W]
// with axis = 1 means B [1, C, 1, 1]. Returns B viewed with A's rank so that
// numpy broadcasting gives that result.
absl::StatusOr<Tensor> AlignLegacyOperand(const OpKernelContext& ctx, const Tensor& a, const Tensor& b,
                                          int64_t axis_attr) {
  if (b.rank() > a.rank()) {
    return ctx.Error(absl::StrCat("with broadcast = 1, B ", DimsToString(b.dims()), " may not have more dims than A ",
                                  DimsToString(a.dims())));
  }
  const int64_t axis = axis_attr == kNoAxis ? a.rank() - b.rank() : (axis_attr < 0 ? axis_attr + a.rank() : axis_attr);
  if (axis < 0 || axis + b.rank() > a.rank()) {
    return ctx.Error(absl::StrCat("attribute 'axis' ", axis_attr, " does not place B ", DimsToString(b.dims()),
                                  " inside A ", DimsToString(a.dims())));
  }
  std::vector<int64_t> dims(a.rank(), 1);
  for (int64_t i = 0; i < b.rank(); ++i) {
    if (b.dims()[i] != 1 && b.dims()[i] != a.dims()[axis + i]) {
      return ctx.Error(
          absl::StrCat("B ", DimsToString(b.dims()), " at axis ", axis, " does not match A ", DimsToString(a.dims())));
    }
    dims[axis + i] = b.dims()[i];
  }
  return b.Reshaped(dims);
}

template <Arith op>
class BinaryArith final : public OpKernel {
 public:
  explicit BinaryArith(const OpKernelInfo& info)
      : legacy_(info.node().since_version > 0 && info.node().since_version < 7),
        legacy_broadcast_(info.AttrOr<int64_t>("broadcast", 0) != 0),
        legacy_axis_(info.AttrOr<int64_t>("axis", kNoAxis)) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* a = nullptr;
    const Tensor* b = nullptr;
    Tensor aligned;
    Dims out_dims;
    if (legacy_ && legacy_broadcast_) {
      ASSIGN_OR_RETURN(a, RequireInput(ctx, 0, "A"));
      ASSIGN_OR_RETURN(const Tensor* b_in, RequireInput(ctx, 1, "B"));
      if (a->type() != b_in->type()) {
        return ctx.Error(
            absl::StrCat("input types differ: ", DataTypeName(a->type()), " vs ", DataTypeName(b_in->type())));
      }
      ASSIGN_OR_RETURN(aligned, AlignLegacyOperand(ctx, *a, *b_in, legacy_axis_));
      b = &aligned;
      out_dims = a->dims();
    } else {
      ASSIGN_OR_RETURN(BinaryOperands operands, SameTypeOperands(ctx, "A", "B"));
      a = operands.a;
      b = operands.b;
      out_dims = std::move(operands.dims);
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, a->type()));
    return DispatchTypes<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, Half,
                         BFloat16>(a->type(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half>) {
        BroadcastBinary<uint16_t, uint16_t>(
            *a, *b, *y, [](uint16_t x, uint16_t z) { return FloatToHalf(Apply<op>(HalfToFloat(x), HalfToFloat(z))); });
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        BroadcastBinary<uint16_t, uint16_t>(*a, *b, *y, [](uint16_t x, uint16_t z) {
          return FloatToBFloat16(Apply<op>(BFloat16ToFloat(x), BFloat16ToFloat(z)));
        });
      } else if constexpr (std::is_same_v<T, float>) {
        FloatArith<op>(*a, *b, *y);
      } else {
        BroadcastBinary<T, T>(*a, *b, *y, [](T x, T z) { return Apply<op, T>(x, z); });
      }
      return absl::OkStatus();
    });
  }

 private:
  bool legacy_;
  bool legacy_broadcast_;
  int64_t legacy_axis_;
};

template <Arith op>
void RegisterArith(KernelRegistry& r, const char* name) {
  // Opsets 1-6 (with `broadcast`/`axis`) and 7+ (numpy broadcasting). Y may
  // take over either input's buffer when that input dies here and has Y's
  // size (so its shape: it is not broadcast): every loop of BroadcastBinary
  // reads a full-shaped operand at Y's own index before writing it.
  r.Register(KernelDefBuilder(name).Since(1, 6).Types("T", kNumericTypes).MayInplace(0, 0).MayInplace(1, 0).Build(),
             MakeFactory<BinaryArith<op>>());
  r.Register(KernelDefBuilder(name).Since(7).Types("T", kNumericTypes).MayInplace(0, 0).MayInplace(1, 0).Build(),
             MakeFactory<BinaryArith<op>>());
}

}  // namespace

void RegisterElementwiseKernels(KernelRegistry& r) {
  RegisterArith<Arith::kAdd>(r, "Add");
  RegisterArith<Arith::kSub>(r, "Sub");
  RegisterArith<Arith::kMul>(r, "Mul");
  RegisterArith<Arith::kDiv>(r, "Div");
}

}  // namespace onyx
