// UnaryKernel<Op>: a kernel applying Op element-wise with y of x's shape and
// type. Op is a functor constructed from the OpKernelInfo (for attributes) that
// declares the C++ types it computes in and a templated call operator:
//
//   struct Neg {
//     using Types = SignedCompute;
//     explicit Neg(const OpKernelInfo&) {}
//     template <typename T> T operator()(T x) const { return -x; }
//   };
//
// float16/bfloat16 inputs are computed in float. The loop is a plain indexed
// loop over contiguous memory so the compiler can vectorise it; an Op whose
// function the compiler cannot vectorise (exp, erf, ...) may add
//   static void MapFloats(const float* x, float* y, int64_t n);
// (simd/vector_math.h) which then maps float arrays in its place.
#pragma once

#include "common/parallel_for.h"
#include "framework/kernel_registry.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"

namespace onyx {

template <typename T, typename Op>
void MapElements(const T* in, T* out, int64_t n, const Op& op) {
  if constexpr (std::is_same_v<T, float> && requires { Op::MapFloats(in, out, n); }) {
    ParallelFor(n, 16384, [&](int64_t begin, int64_t end) { Op::MapFloats(in + begin, out + begin, end - begin); });
  } else {
    ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = op(in[i]);
    });
  }
}

template <typename Op>
class UnaryKernel final : public OpKernel {
 public:
  explicit UnaryKernel(const OpKernelInfo& info) : op_(info) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, x->dims(), x->type()));
    if (IsHalfLike(x->type())) {
      Tensor xf = UpcastToFloat(*x);
      Tensor yf = Tensor::Allocate(DataType::kFloat, x->dims());
      MapElements(xf.data<float>(), yf.mutable_data<float>(), xf.num_elements(), op_);
      DowncastFromFloat(yf, *y);
      return absl::OkStatus();
    }
    absl::Status s = DispatchList(typename Op::Types{}, x->type(), [&](auto tag) {
      using T = decltype(tag);
      MapElements(x->data<T>(), y->mutable_data<T>(), x->num_elements(), op_);
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    return s;
  }

 private:
  Op op_;
};

// An Op computing `expr` in x for the floating types (FloatCompute); further
// arguments become members of it (a MapFloats, for instance).
#define ONYX_FLOAT_ELEMENTWISE(Name, expr, ...) \
  struct Name {                                 \
    using Types = FloatCompute;                 \
    explicit Name(const OpKernelInfo&) {}       \
    template <typename T>                       \
    T operator()(T x) const {                   \
      return expr;                              \
    }                                           \
    __VA_ARGS__                                 \
  };

// The same with its float arrays through `array_fn` (simd/vector_math.h).
#define ONYX_VECTORIZED_UNARY(Name, expr, array_fn) \
  ONYX_FLOAT_ELEMENTWISE(                           \
      Name, expr, static void MapFloats(const float* x, float* y, int64_t n) { array_fn(x, y, n); })

// Registers UnaryKernel<Op> for `name` from opset `since`; element-wise, so
// it may run in place over an input that dies.
template <typename Op>
void RegisterUnary(KernelRegistry& r, const char* name, int since, const std::vector<DataType>& types) {
  r.Register(KernelDefBuilder(name).Since(since).Types("T", types).MayInplace(0, 0).Build(),
             MakeFactory<UnaryKernel<Op>>());
}

}  // namespace onyx
