// LinearClassifier-1 and LinearRegressor-1: scores = X * coefficients^T +
// intercepts in float (integer and double inputs are converted first, as in
// ONNX Runtime), then labels and post transforms by ONNX Runtime's rules.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/ml/ml_kernels.h"

namespace onyx {
namespace {

const std::vector<DataType> kLinearInputs = {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32};

// scores[r * targets + t] = sum_f x[r, f] * coef[t * features + f] + intercept[t].
absl::Status LinearScores(const OpKernelContext& ctx, const Tensor& x, const std::vector<float>& coef,
                          const std::vector<float>& intercepts, int64_t targets, int64_t* rows,
                          std::vector<float>* scores) {
  int64_t features = 0;
  RETURN_IF_ERROR(RowsAndColumns(ctx, x, rows, &features));
  if (static_cast<int64_t>(coef.size()) < targets * features) {
    return ctx.Error(absl::StrCat("coefficients has ", coef.size(), " values, ", targets, " targets of ", features,
                                  " features need ", targets * features));
  }
  const std::vector<float> in = ToFloats(x);
  scores->assign(*rows * targets, 0.0f);
  const int64_t n = *rows;
  ParallelFor(n, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, targets * features)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      for (int64_t t = 0; t < targets; ++t) {
        float acc = 0.0f;
        for (int64_t f = 0; f < features; ++f) acc += in[r * features + f] * coef[t * features + f];
        (*scores)[r * targets + t] = acc + (intercepts.empty() ? 0.0f : intercepts[t]);
      }
    }
  });
  return absl::OkStatus();
}

class LinearClassifier final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<LinearClassifier>(new LinearClassifier());
    k->coefficients_ = info.AttrOr<std::vector<float>>("coefficients", {});
    k->intercepts_ = info.AttrOr<std::vector<float>>("intercepts", {});
    k->strings_ = info.AttrOr<std::vector<std::string>>("classlabels_strings", {});
    k->ints_ = info.AttrOr<std::vector<int64_t>>("classlabels_ints", {});
    ASSIGN_OR_RETURN(k->post_transform_, ParsePostTransform(info));
    const int64_t classes = static_cast<int64_t>(k->intercepts_.size());
    const int64_t labels = static_cast<int64_t>(k->strings_.empty() ? k->ints_.size() : k->strings_.size());
    if (k->coefficients_.empty()) return info.Error("coefficients must be set");
    if (classes == 0) return info.Error("intercepts must be set: their count is the number of classes");
    // One score with two labels is the binary form; otherwise one label per score.
    if (classes == 1 ? labels != 2 : labels < classes) {
      return info.Error(absl::StrCat(labels, " class labels for ", classes, " intercepts"));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    const int64_t classes = static_cast<int64_t>(intercepts_.size());
    int64_t rows = 0;
    std::vector<float> scores;
    RETURN_IF_ERROR(LinearScores(ctx, *x, coefficients_, intercepts_, classes, &rows, &scores));
    const bool strings = !strings_.empty();
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, {rows}, strings ? DataType::kString : DataType::kInt64));
    const int64_t columns = classes == 1 ? 2 : classes;
    ASSIGN_OR_RETURN(Tensor * z, ctx.Output(1, {rows, columns}, DataType::kFloat));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      if (classes == 1) {
        best = scores[r] > 0 ? 1 : 0;
      } else {
        for (int64_t c = 1; c < classes; ++c) best = scores[r * classes + c] > scores[r * classes + best] ? c : best;
      }
      if (strings) y->mutable_data<std::string>()[r] = strings_[best];
      else y->mutable_data<int64_t>()[r] = ints_[best];
    }
    float* out = z->mutable_data<float>();
    if (classes > 1) {
      for (int64_t r = 0; r < rows; ++r) {
        std::copy(&scores[r * classes], &scores[(r + 1) * classes], out + r * classes);
        TransformScores(post_transform_, out + r * classes, classes);
      }
      return absl::OkStatus();
    }
    // One score per row: ONNX Runtime writes [1 - p, p] with p the score (its
    // logistic under LOGISTIC); under PROBIT it writes the N probits packed at
    // the start of Z and leaves the rest 0.
    for (int64_t r = 0; r < rows; ++r) {
      if (post_transform_ == PostTransform::kProbit) {
        out[r] = Probit(scores[r]);
        continue;
      }
      const float p = post_transform_ == PostTransform::kLogistic ? Logistic(scores[r]) : scores[r];
      out[2 * r] = 1.0f - p;
      out[2 * r + 1] = p;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<float> coefficients_, intercepts_;
  std::vector<std::string> strings_;
  std::vector<int64_t> ints_;
  PostTransform post_transform_ = PostTransform::kNone;
};

class LinearRegressor final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<LinearRegressor>(new LinearRegressor());
    k->coefficients_ = info.AttrOr<std::vector<float>>("coefficients", {});
    k->intercepts_ = info.AttrOr<std::vector<float>>("intercepts", {});
    k->targets_ = info.AttrOr<int64_t>("targets", 1);
    ASSIGN_OR_RETURN(k->post_transform_, ParsePostTransform(info));
    if (k->targets_ <= 0) return info.Error(absl::StrCat("targets must be positive, received ", k->targets_));
    if (!k->intercepts_.empty() && static_cast<int64_t>(k->intercepts_.size()) != k->targets_) {
      return info.Error(
          absl::StrCat("intercepts has ", k->intercepts_.size(), " values for ", k->targets_, " targets"));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    int64_t rows = 0;
    std::vector<float> scores;
    RETURN_IF_ERROR(LinearScores(ctx, *x, coefficients_, intercepts_, targets_, &rows, &scores));
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, {rows, targets_}, DataType::kFloat));
    float* out = y->mutable_data<float>();
    std::copy(scores.begin(), scores.end(), out);
    // A single target takes PROBIT only, as in ONNX Runtime.
    for (int64_t r = 0; r < rows; ++r) {
      if (targets_ > 1) TransformScores(post_transform_, out + r * targets_, targets_);
      else if (post_transform_ == PostTransform::kProbit) out[r] = Probit(out[r]);
    }
    return absl::OkStatus();
  }

 private:
  std::vector<float> coefficients_, intercepts_;
  int64_t targets_ = 1;
  PostTransform post_transform_ = PostTransform::kNone;
};

}  // namespace

void RegisterLinearKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("LinearClassifier").Domain(kMlDomain).Since(1).Types("T1", kLinearInputs).Build(),
             MakeFactory<LinearClassifier>());
  r.Register(KernelDefBuilder("LinearRegressor").Domain(kMlDomain).Since(1).Types("T", kLinearInputs).Build(),
             MakeFactory<LinearRegressor>());
}

}  // namespace onyx
