// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, with axes
// as an attribute (opsets < 13, and < 18 except ReduceSum) or as an optional
// input, keepdims and noop_with_empty_axes. Floating inputs accumulate in
// double; integers in their own type; bool (ReduceMax/Min-20) as any/all.
#include <cmath>
#include <limits>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/reduce_plan.h"

namespace onyx {
namespace {

enum class Red { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// bool accumulates as uint8_t: max is any, min is all (true over no elements).
template <typename T>
using AccOf =
    std::conditional_t<std::is_floating_point_v<T>, double, std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

template <Red op, typename A>
inline A Init() {
  if constexpr (op == Red::kMax)
    return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                : std::numeric_limits<A>::lowest();
  if constexpr (op == Red::kMin)
    return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
  if constexpr (op == Red::kProd) return A(1);
  return A(0);
}

// Per-element transform before combining; `shift` is LogSumExp's per-output max.
template <Red op, typename A>
inline A Map(A v, A shift) {
  if constexpr (op == Red::kL1) {
    if constexpr (std::is_unsigned_v<A>) return v;
    else return v < A(0) ? static_cast<A>(-v) : v;
  }
  if constexpr (op == Red::kL2 || op == Red::kSumSquare) return static_cast<A>(v * v);
  if constexpr (op == Red::kLogSumExp) return static_cast<A>(std::exp(static_cast<double>(v - shift)));
  return v;
}

template <Red op, typename A>
inline A Combine(A acc, A v) {
  if constexpr (op == Red::kMax) return v > acc || v != v ? v : acc;
  if constexpr (op == Red::kMin) return v < acc || v != v ? v : acc;
  if constexpr (op == Red::kProd) return static_cast<A>(acc * v);
  return static_cast<A>(acc + v);
}

template <Red op, typename A>
inline A Finalize(A acc, int64_t count, A shift) {
  if constexpr (op == Red::kMean) return count == 0 ? static_cast<A>(NAN) : static_cast<A>(acc / static_cast<A>(count));
  if constexpr (op == Red::kL2) return static_cast<A>(std::sqrt(static_cast<double>(acc)));
  if constexpr (op == Red::kLogSum) return static_cast<A>(std::log(static_cast<double>(acc)));
  if constexpr (op == Red::kLogSumExp) return static_cast<A>(std::log(static_cast<double>(acc)) + shift);
  return acc;
}

// out[...] = Finalize(R Map(x)), following `plan`. `shift` (may be null) holds one
// value per output for LogSumExp.
template <Red op, typename T>
void RunReduce(const T* x, const ReducePlan& plan, const AccOf<T>* shift, AccOf<T>* out) {
  using A = AccOf<T>;
  const int64_t outer = static_cast<int64_t>(plan.keep.size());
  const int64_t inner = plan.inner;
  const int64_t nred = static_cast<int64_t>(plan.red.size());
  const int64_t work = std::max<int64_t>(1, nred * inner);
  ParallelFor(outer, std::max<int64_t>(1, 32768 / work), [&](int64_t begin, int64_t end) {
    std::vector<A> acc(plan.inner_kept ? inner : 0);
    for (int64_t k = begin; k < end; ++k) {
      const T* base = x + plan.keep[k];
      if (plan.inner_kept) {
        A* o = out + k * inner;
        const A* sh = shift ? shift + k * inner : nullptr;
        std::fill(acc.begin(), acc.end(), Init<op, A>());
        for (int64_t r = 0; r < nred; ++r) {
          const T* row = base + plan.red[r];
          for (int64_t i = 0; i < inner; ++i) {
            acc[i] = Combine<op, A>(acc[i], Map<op, A>(static_cast<A>(row[i]), sh ? sh[i] : A(0)));
          }
        }
        for (int64_t i = 0; i < inner; ++i) o[i] = Finalize<op, A>(acc[i], plan.reduced_count, sh ? sh[i] : A(0));
      } else {
        const A s = shift ? shift[k] : A(0);
        A a = Init<op, A>();
        for (int64_t r = 0; r < nred; ++r) {
          const T* row = base + plan.red[r];
          for (int64_t l = 0; l < inner; ++l) a = Combine<op, A>(a, Map<op, A>(static_cast<A>(row[l]), s));
        }
        out[k] = Finalize<op, A>(a, plan.reduced_count, s);
      }
    }
  });
}

bool AxesFromInput(absl::string_view op_type, int since_version) {
  return since_version >= 18 || (op_type == "ReduceSum" && since_version >= 13);
}

template <Red op>
class Reduce final : public OpKernel {
 public:
  explicit Reduce(const OpKernelInfo& info)
      : axes_input_(AxesFromInput(info.node().op_type, info.node().since_version)),
        keepdims_(info.AttrOr<int64_t>("keepdims", 1) != 0),
        noop_with_empty_axes_(info.AttrOr<int64_t>("noop_with_empty_axes", 0) != 0),
        axes_attr_(info.AttrOr<std::vector<int64_t>>("axes", {})) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "data"));
    std::vector<int64_t> raw_axes = axes_attr_;
    if (axes_input_) {
      raw_axes.clear();
      if (const Tensor* a = ctx.Input(1)) {
        if (a->type() != DataType::kInt64 || a->rank() > 1) {
          return ctx.Error(absl::StrCat("axes must be a 1-D int64 tensor, received ", DataTypeName(a->type()), " ",
                                        DimsToString(a->dims())));
        }
        raw_axes.assign(a->data<int64_t>(), a->data<int64_t>() + a->num_elements());
      }
      if (raw_axes.empty() && noop_with_empty_axes_) {
        ctx.SetOutput(0, Value(*x));
        return absl::OkStatus();
      }
    }
    auto axes = NormalizeAxes(raw_axes, x->rank());
    if (!axes.ok()) return ctx.Error(axes.status().message());
    const ReducePlan plan = ReducePlan::Make(x->dims(), *axes);
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, keepdims_ ? plan.out_keepdims : plan.out_squeezed, x->type()));
    Tensor xf = UpcastToFloat(*x);
    const bool half = IsHalfLike(x->type());
    if (x->type() == DataType::kBool && op != Red::kMax && op != Red::kMin) {
      return ctx.Error("element type bool is reduced only by ReduceMax and ReduceMin (opset 20)");
    }
    absl::Status s = DispatchTypes<float, double, int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t, bool>(
        xf.type(), [&](auto tag) {
          using T = decltype(tag);
          using A = AccOf<T>;
          const int64_t n = y->num_elements();
          std::vector<A> acc(n);
          if (x->num_elements() == 0) {
            std::fill(acc.begin(), acc.end(), Finalize<op, A>(Init<op, A>(), 0, A(0)));
          } else if constexpr (op == Red::kLogSumExp) {
            std::vector<A> max(n);
            RunReduce<Red::kMax, T>(xf.data<T>(), plan, nullptr, max.data());
            for (A& m : max) {
              if (std::isinf(static_cast<double>(m))) m = A(0);
            }
            RunReduce<op, T>(xf.data<T>(), plan, max.data(), acc.data());
          } else {
            RunReduce<op, T>(xf.data<T>(), plan, nullptr, acc.data());
          }
          if (half) {
            Tensor yf = Tensor::Allocate(DataType::kFloat, y->dims());
            float* pf = yf.mutable_data<float>();
            for (int64_t i = 0; i < n; ++i) pf[i] = static_cast<float>(acc[i]);
            DowncastFromFloat(yf, *y);
          } else {
            T* out = y->mutable_data<T>();
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(acc[i]);
          }
          return absl::OkStatus();
        });
    if (!s.ok()) return ctx.Error(s.message());
    return s;
  }

 private:
  bool axes_input_;
  bool keepdims_;
  bool noop_with_empty_axes_;
  std::vector<int64_t> axes_attr_;
};

template <bool kMax>
class ArgReduce final : public OpKernel {
 public:
  explicit ArgReduce(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", 0)),
        keepdims_(info.AttrOr<int64_t>("keepdims", 1) != 0),
        select_last_(info.AttrOr<int64_t>("select_last_index", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "data"));
    if (x->rank() == 0) return ctx.Error("input must have rank >= 1");
    auto axis_or = NormalizeAxis(axis_, x->rank());
    if (!axis_or.ok()) return ctx.Error(axis_or.status().message());
    const int64_t axis = *axis_or;
    const int64_t len = x->dims()[axis];
    if (len == 0) return ctx.Error(absl::StrCat("cannot take Arg", kMax ? "Max" : "Min", " over empty axis ", axis));
    Dims out_dims;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < x->rank(); ++d) {
      if (d < axis) outer *= x->dims()[d];
      if (d > axis) inner *= x->dims()[d];
      if (d != axis) out_dims.push_back(x->dims()[d]);
      else if (keepdims_) out_dims.push_back(1);
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, DataType::kInt64));
    Tensor xf = UpcastToFloat(*x);
    const bool last = select_last_;
    absl::Status s = DispatchList(NumericCompute{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = xf.data<T>();
      int64_t* py = y->mutable_data<int64_t>();
      ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len * inner)),
                  [&](int64_t begin, int64_t end) {
        std::vector<T> best(inner);
        for (int64_t o = begin; o < end; ++o) {
          const T* base = px + o * len * inner;
          int64_t* idx = py + o * inner;
          std::copy(base, base + inner, best.begin());
          std::fill(idx, idx + inner, 0);
          for (int64_t j = 1; j < len; ++j) {
            const T* row = base + j * inner;
            for (int64_t i = 0; i < inner; ++i) {
              const bool better =
                  kMax ? (last ? row[i] >= best[i] : row[i] > best[i]) : (last ? row[i] <= best[i] : row[i] < best[i]);
              if (better) {
                best[i] = row[i];
                idx[i] = j;
              }
            }
          }
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    return s;
  }

 private:
  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

template <Red op>
void Add(KernelRegistry& r, const char* name) {
  r.Register(KernelDefBuilder(name).Since(1).Build(), MakeFactory<Reduce<op>>());
}

}  // namespace

void RegisterReduceKernels(KernelRegistry& r) {
  Add<Red::kSum>(r, "ReduceSum");
  Add<Red::kMean>(r, "ReduceMean");
  Add<Red::kMax>(r, "ReduceMax");
  Add<Red::kMin>(r, "ReduceMin");
  Add<Red::kProd>(r, "ReduceProd");
  Add<Red::kL1>(r, "ReduceL1");
  Add<Red::kL2>(r, "ReduceL2");
  Add<Red::kLogSum>(r, "ReduceLogSum");
  Add<Red::kLogSumExp>(r, "ReduceLogSumExp");
  Add<Red::kSumSquare>(r, "ReduceSumSquare");
  r.Register(KernelDefBuilder("ArgMax").Since(1).Build(), MakeFactory<ArgReduce<true>>());
  r.Register(KernelDefBuilder("ArgMin").Since(1).Build(), MakeFactory<ArgReduce<false>>());
}

}  // namespace onyx
