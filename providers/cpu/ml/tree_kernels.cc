// TreeEnsembleClassifier-1/3, TreeEnsembleRegressor-1/3 and TreeEnsemble-5.
// The trees are flattened at creation (tree_ensemble.h); Compute walks them
// row by row in parallel and turns each row's sums into scores and labels
// with ONNX Runtime's rules, including its binary-classifier special cases.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/ml/ml_kernels.h"
#include "providers/cpu/ml/tree_ensemble.h"

namespace onyx {
namespace {

// Writes the n >= 2 scores of `s` to `out`: a slot no leaf reached is 0; the
// transform runs in float, as in ONNX Runtime, while NONE keeps T.
template <typename T, typename O>
void WriteScores(const RowScores<T>& s, PostTransform pt, O* out) {
  const int64_t n = static_cast<int64_t>(s.score.size());
  if (pt == PostTransform::kNone) {
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<O>(s.has[j] ? s.score[j] : T(0));
    return;
  }
  std::vector<float> v(n);
  for (int64_t j = 0; j < n; ++j) v[j] = static_cast<float>(s.has[j] ? s.score[j] : T(0));
  TransformScores(pt, v.data(), n);
  for (int64_t j = 0; j < n; ++j) out[j] = static_cast<O>(v[j]);
}

// Regression output of one row (TreeEnsembleRegressor, TreeEnsemble).
template <typename T, typename O>
void FinishRegression(const TreeEnsemble<T>& e, PostTransform pt, RowScores<T>& s, O* out) {
  const std::vector<T>& base = e.base_values();
  const auto agg = e.aggregate();
  const T trees = static_cast<T>(e.n_trees());
  if (e.n_targets() == 1) {
    // One target: ONNX Runtime applies PROBIT only; other transforms are ignored.
    const T origin = base.size() == 1 ? base[0] : T(0);
    T v = s.single;
    if (agg == TreeAggregate::kAverage) v = v / trees + origin;
    else if (agg == TreeAggregate::kSum) v += origin;
    else v = s.single_has ? v + origin : origin;
    *out = pt == PostTransform::kProbit ? static_cast<O>(Probit(static_cast<float>(v))) : static_cast<O>(v);
    return;
  }
  const bool use_base = base.size() == s.score.size();
  for (size_t j = 0; j < s.score.size(); ++j) {
    const T b = use_base ? base[j] : T(0);
    if (agg == TreeAggregate::kAverage) s.score[j] = s.score[j] / trees + b;
    else if (agg == TreeAggregate::kSum) s.score[j] += b;
    else s.score[j] = b + (s.has[j] ? s.score[j] : T(0));
  }
  WriteScores(s, pt, out);
}

// Checks X and returns its row count; `cols` as ONNX Runtime counts them (a
// 1-D input has one feature column whatever its length).
template <typename T>
absl::StatusOr<int64_t> CheckInput(const OpKernelContext& ctx, const TreeEnsemble<T>& e, const Tensor& x,
                                   int64_t* stride) {
  if (x.rank() != 1 && x.rank() != 2) {
    return ctx.Error(absl::StrCat("input must be [N, F] or [F], received ", DimsToString(x.dims())));
  }
  const int64_t rows = x.rank() == 1 ? 1 : x.dims()[0];
  const int64_t cols = x.rank() == 2 ? x.dims()[1] : 1;
  *stride = x.rank() == 1 ? x.dims()[0] : x.dims()[1];
  if (e.max_feature() >= cols) {
    return ctx.Error(
        absl::StrCat("a tree node reads feature ", e.max_feature(), " but the input has ", cols, " features"));
  }
  return rows;
}

// Calls fn(const I* data) with X's data typed; `T` double takes double input.
template <typename T, typename Fn>
absl::Status WithInput(const OpKernelContext& ctx, const Tensor& x, Fn fn) {
  if constexpr (std::is_same_v<T, double>) {
    if (x.type() == DataType::kDouble) return fn(x.data<double>());
  } else {
    if (x.type() == DataType::kFloat) return fn(x.data<float>());
    if (x.type() == DataType::kInt64) return fn(x.data<int64_t>());
    if (x.type() == DataType::kInt32) return fn(x.data<int32_t>());
  }
  return ctx.Error(absl::StrCat("input type ", DataTypeName(x.type()), " does not match the kernel built for ",
                                std::is_same_v<T, double> ? "double" : "float, int64 or int32", " input"));
}

// TreeEnsembleRegressor (output float) and TreeEnsemble (output = input type).
template <typename T>
class TreeRegressor final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, bool v5) {
    auto k = std::unique_ptr<TreeRegressor>(new TreeRegressor());
    k->v5_ = v5;
    if (v5) {
      ASSIGN_OR_RETURN(auto e, TreeEnsemble<T>::FromV5(info));
      k->ensemble_ = std::make_unique<TreeEnsemble<T>>(std::move(e));
      // ONNX Runtime 1.30 reads 1 as LOGISTIC and 2 as SOFTMAX, the reverse
      // of the spec's table (1 SOFTMAX, 2 LOGISTIC); onyx matches the runtime
      // models are validated against.
      const int64_t pt = info.AttrOr<int64_t>("post_transform", 0);
      static constexpr PostTransform kV5[] = {PostTransform::kNone, PostTransform::kLogistic, PostTransform::kSoftmax,
                                              PostTransform::kSoftmaxZero, PostTransform::kProbit};
      if (pt < 0 || pt > 4) return info.Error(absl::StrCat("post_transform ", pt, " is not in [0, 4]"));
      k->post_transform_ = kV5[pt];
    } else {
      ASSIGN_OR_RETURN(auto e, TreeEnsemble<T>::FromV3(info, TreeEnsemble<T>::Kind::kRegressor));
      k->ensemble_ = std::make_unique<TreeEnsemble<T>>(std::move(e));
      ASSIGN_OR_RETURN(k->post_transform_, ParsePostTransform(info));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    const TreeEnsemble<T>& e = *ensemble_;
    int64_t stride = 0;
    ASSIGN_OR_RETURN(const int64_t rows, CheckInput(ctx, e, *x, &stride));
    const DataType out_type = v5_ ? x->type() : DataType::kFloat;
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, {rows, e.n_targets()}, out_type));
    return WithInput<T>(ctx, *x, [&](const auto* data) {
      ForEachRowBlock(e, data, stride, rows, [&](int64_t r, RowScores<T>& s) {
        if (out_type == DataType::kDouble) {
          FinishRegression(e, post_transform_, s, y->mutable_data<double>() + r * e.n_targets());
        } else {
          FinishRegression(e, post_transform_, s, y->mutable_data<float>() + r * e.n_targets());
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  std::unique_ptr<TreeEnsemble<T>> ensemble_;
  PostTransform post_transform_ = PostTransform::kNone;
  bool v5_ = false;
};

// The float or double variant, by the declared input type.
absl::StatusOr<std::unique_ptr<OpKernel>> CreateRegressor(const OpKernelInfo& info, bool v5) {
  if (info.InputType(0) == DataType::kDouble) return TreeRegressor<double>::Create(info, v5);
  return TreeRegressor<float>::Create(info, v5);
}

}  // namespace

absl::StatusOr<std::unique_ptr<OpKernel>> CreateTreeClassifier(const OpKernelInfo& info);  // tree_classifier.cc

void RegisterTreeEnsembleKernels(KernelRegistry& r) {
  const std::vector<DataType> inputs = {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32};
  r.Register(KernelDefBuilder("TreeEnsembleRegressor").Domain(kMlDomain).Since(1, 4).Types("T", inputs).Build(),
             [](const OpKernelInfo& info) { return CreateRegressor(info, false); });
  r.Register(KernelDefBuilder("TreeEnsemble")
                 .Domain(kMlDomain)
                 .Since(5)
                 .Types("T", {DataType::kFloat, DataType::kDouble})
                 .Build(),
             [](const OpKernelInfo& info) { return CreateRegressor(info, true); });
  r.Register(KernelDefBuilder("TreeEnsembleClassifier").Domain(kMlDomain).Since(1, 4).Types("T1", inputs).Build(),
             CreateTreeClassifier);
}

}  // namespace onyx
