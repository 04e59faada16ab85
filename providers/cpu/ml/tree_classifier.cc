// TreeEnsembleClassifier-1/3: summed class scores, then ONNX Runtime's rules
// for labels and scores. Two classes are special: when every weight names the
// same class ("binary case") one summed score decides between the labels (at
// 0.5 when no weight is negative, else at 0) and the second score column is
// derived from it (1 - s, -s or the logistic pair).
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

template <typename T>
class TreeClassifier final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<TreeClassifier>(new TreeClassifier());
    ASSIGN_OR_RETURN(auto e, TreeEnsemble<T>::FromV3(info, TreeEnsemble<T>::Kind::kClassifier));
    k->ensemble_ = std::make_unique<TreeEnsemble<T>>(std::move(e));
    ASSIGN_OR_RETURN(k->post_transform_, ParsePostTransform(info));
    k->string_labels_ = info.AttrOr<std::vector<std::string>>("classlabels_strings", {});
    k->int_labels_ = info.AttrOr<std::vector<int64_t>>("classlabels_int64s", {});
    k->binary_case_ = k->ensemble_->n_targets() == 2 && k->ensemble_->distinct_targets() == 1;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    const TreeEnsemble<T>& e = *ensemble_;
    if (x->rank() != 1 && x->rank() != 2) {
      return ctx.Error(absl::StrCat("input must be [N, F] or [F], received ", DimsToString(x->dims())));
    }
    const int64_t rows = x->rank() == 1 ? 1 : x->dims()[0];
    const int64_t cols = x->rank() == 2 ? x->dims()[1] : 1;
    const int64_t stride = x->rank() == 1 ? x->dims()[0] : x->dims()[1];
    if (e.max_feature() >= cols) {
      return ctx.Error(
          absl::StrCat("a tree node reads feature ", e.max_feature(), " but the input has ", cols, " features"));
    }
    const int64_t n = e.n_targets();
    const bool strings = !string_labels_.empty();
    ASSIGN_OR_RETURN(Tensor * label, ctx.Output(0, {rows}, strings ? DataType::kString : DataType::kInt64));
    ASSIGN_OR_RETURN(Tensor * z, ctx.Output(1, {rows, n}, DataType::kFloat));
    std::vector<int64_t> index(rows);  // class index, or the literal label ONNX Runtime returns
    auto run = [&](const auto* data) {
      ForEachRowBlock(e, data, stride, rows,
                      [&](int64_t r, RowScores<T>& s) { index[r] = Finish(s, z->mutable_data<float>() + r * n); });
      return absl::OkStatus();
    };
    absl::Status status;
    if constexpr (std::is_same_v<T, double>) {
      if (x->type() != DataType::kDouble) return ctx.Error("the kernel was built for double input");
      status = run(x->data<double>());
    } else {
      switch (x->type()) {
        case DataType::kFloat: status = run(x->data<float>()); break;
        case DataType::kInt64: status = run(x->data<int64_t>()); break;
        case DataType::kInt32: status = run(x->data<int32_t>()); break;
        default: return ctx.Error(absl::StrCat("input type ", DataTypeName(x->type()), " is not supported"));
      }
    }
    RETURN_IF_ERROR(status);
    for (int64_t r = 0; r < rows; ++r) {
      if (!strings) {
        label->mutable_data<int64_t>()[r] = index[r];
      } else if (index[r] < 0 || index[r] >= static_cast<int64_t>(string_labels_.size())) {
        return ctx.Error(
            absl::StrCat("row ", r, " selects class ", index[r], " of ", string_labels_.size(), " labels"));
      } else {
        label->mutable_data<std::string>()[r] = string_labels_[index[r]];
      }
    }
    return absl::OkStatus();
  }

 private:
  // Label of class index i (a string label is resolved later from the index).
  int64_t LabelOf(int64_t i) const { return string_labels_.empty() ? int_labels_[i] : i; }

  // Scores of one row into z[0, n); returns the label (or string label index).
  int64_t Finish(RowScores<T>& s, float* z) const {
    const TreeEnsemble<T>& e = *ensemble_;
    const std::vector<T>& base = e.base_values();
    const int64_t n = e.n_targets();
    if (n == 1) return FinishOneClass(s.single, z);
    if (n > 2) {
      for (size_t k = 0; k < base.size() && k < s.score.size(); ++k) {
        s.score[k] = s.has[k] ? s.score[k] + base[k] : base[k];
        s.has[k] = 1;
      }
      int64_t best = -1;
      for (int64_t j = 0; j < n; ++j) {
        if (s.has[j] && (best == -1 || s.score[j] > s.score[best])) best = j;
      }
      WriteScores(s, z, n);
      return LabelOf(best < 0 ? 0 : best);
    }
    // Two classes.
    int second = -1;  // how the single-score case derives the other column
    size_t size = 2;
    if (base.size() == 2) {
      if (s.has[1]) {
        // ONNX Runtime keeps only base[1] plus class 0's sum here.
        s.score[1] = base[1] + s.score[0];
        s.score[0] = -s.score[1];
      } else {
        s.score[1] += base[1];
        s.score[0] += base[0];
      }
    } else if (base.size() == 1) {
      s.score[0] += base[0];
      if (!s.has[1]) size = 1;
    } else if (base.empty()) {
      second = 3;
      if (!s.has[1]) size = 1;
    }
    const T pos = (size == 2 && s.has[1]) ? s.score[1] : (s.has[0] ? s.score[0] : T(0));
    int64_t label;
    if (binary_case_) {
      const bool positive = e.weights_nonnegative() ? pos > T(0.5) : pos > T(0);
      second = e.weights_nonnegative() ? (positive ? 0 : 1) : (positive ? 2 : 3);
      label = LabelOf(positive ? 1 : 0);
    } else {
      label = pos > T(0) ? 1 : 0;  // ONNX Runtime returns 1 or 0 itself here, not a label
    }
    if (size == 2) {
      WriteScores(s, z, 2);
      return label;
    }
    const float v = static_cast<float>(s.has[0] ? s.score[0] : T(0));
    if (post_transform_ == PostTransform::kProbit) {
      z[0] = Probit(v);
    } else if (second == -1) {
      z[0] = v;
    } else if (post_transform_ == PostTransform::kLogistic) {
      z[0] = Logistic(-v);
      z[1] = Logistic(v);
    } else if (second <= 1) {
      z[0] = 1.0f - v;
      z[1] = v;
    } else {
      z[0] = -v;
      z[1] = v;
    }
    return label;
  }

  // A single class: the sum decides 1 or 0 (literally) and fills one column.
  int64_t FinishOneClass(T sum, float* z) const {
    const std::vector<T>& base = ensemble_->base_values();
    if (base.size() == 2) {
      sum += base[1];
      float pair[2] = {static_cast<float>(-sum), static_cast<float>(sum)};
      TransformScores(post_transform_, pair, 2);
      z[0] = pair[0];
    } else {
      if (base.size() == 1) sum += base[0];
      const float v = static_cast<float>(sum);
      z[0] = post_transform_ == PostTransform::kProbit ? Probit(v) : v;
    }
    return sum > T(0) ? 1 : 0;
  }

  void WriteScores(const RowScores<T>& s, float* z, int64_t n) const {
    for (int64_t j = 0; j < n; ++j) z[j] = static_cast<float>(s.has[j] ? s.score[j] : T(0));
    TransformScores(post_transform_, z, n);
  }

  std::unique_ptr<TreeEnsemble<T>> ensemble_;
  PostTransform post_transform_ = PostTransform::kNone;
  std::vector<std::string> string_labels_;
  std::vector<int64_t> int_labels_;
  bool binary_case_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<OpKernel>> CreateTreeClassifier(const OpKernelInfo& info) {
  if (info.InputType(0) == DataType::kDouble) return TreeClassifier<double>::Create(info);
  return TreeClassifier<float>::Create(info);
}

}  // namespace onyx
