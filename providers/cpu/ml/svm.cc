// SVMClassifier-1 and SVMRegressor-1 in float, as ONNX Runtime computes them.
// With support vectors (libsvm form) the classifier scores every class pair
// (one-vs-one), votes, and optionally turns the pair scores into class
// probabilities with Platt's sigmoid (prob_a, prob_b) and Wu-Lin-Weng's
// pairwise coupling; without them (liblinear form) each class has one row of
// coefficients.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cpu/ml/ml_kernels.h"

namespace onyx {
namespace {

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

// Kernel type and parameters shared by both operators.
struct SvmCommon {
  SvmKernel kernel = SvmKernel::kLinear;
  float gamma = 0.0f, coef0 = 0.0f, degree = 0.0f;

  absl::Status Parse(const OpKernelInfo& info) {
    const std::string k = info.AttrOr<std::string>("kernel_type", "LINEAR");
    if (k == "LINEAR") kernel = SvmKernel::kLinear;
    else if (k == "POLY") kernel = SvmKernel::kPoly;
    else if (k == "RBF") kernel = SvmKernel::kRbf;
    else if (k == "SIGMOID") kernel = SvmKernel::kSigmoid;
    else return info.Error(absl::StrCat("kernel_type '", k, "' is not one of LINEAR, POLY, RBF, SIGMOID"));
    const auto params = info.AttrOr<std::vector<float>>("kernel_params", {});
    if (!params.empty()) {
      if (params.size() < 3) return info.Error("kernel_params must hold gamma, coef0 and degree");
      gamma = params[0];
      coef0 = params[1];
      degree = params[2];
    }
    return absl::OkStatus();
  }

  // K(x, v) for one row x and one vector v of `n` features; LINEAR adds `c`.
  float Apply(const float* x, const float* v, int64_t n, float c) const {
    if (kernel == SvmKernel::kRbf) {
      float sum = 0.0f;
      for (int64_t f = 0; f < n; ++f) sum += (x[f] - v[f]) * (x[f] - v[f]);
      return std::exp(-gamma * sum);
    }
    float dot = 0.0f;
    for (int64_t f = 0; f < n; ++f) dot += x[f] * v[f];
    if (kernel == SvmKernel::kLinear) return dot + c;
    const float z = gamma * dot + coef0;
    if (kernel == SvmKernel::kSigmoid) return std::tanh(z);
    if (degree == 2) return z * z;
    if (degree == 3) return z * z * z;
    return std::pow(z, degree);
  }
};

// libsvm's multiclass_probability (Wu, Lin, Weng 2004) in float, as ONNX
// Runtime runs it: r is the k x k matrix of pairwise probabilities.
void MulticlassProbability(int64_t k, const std::vector<float>& r, float* p) {
  std::vector<float> q(k * k, 0.0f), qp(k, 0.0f);
  const float eps = 0.005f / static_cast<float>(k);
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    for (int64_t j = 0; j < i; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = q[j * k + i];
    }
    for (int64_t j = i + 1; j < k; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = -r[j * k + i] * r[i * k + j];
    }
  }
  for (int loop = 0; loop < 100; ++loop) {
    float pqp = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      qp[i] = 0.0f;
      for (int64_t j = 0; j < k; ++j) qp[i] += q[i * k + j] * p[j];
      pqp += p[i] * qp[i];
    }
    float max_error = 0.0f;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::fabs(qp[i] - pqp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const float diff = (-qp[i] + pqp) / q[i * k + i];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

// Input X as float rows of `features` columns; sets *rows.
absl::StatusOr<std::vector<float>> FeatureRows(const OpKernelContext& ctx, int64_t features, int64_t* rows) {
  const Tensor* x = ctx.Input(0);
  if (x == nullptr) return ctx.Error("input X is missing");
  int64_t cols = 0;
  RETURN_IF_ERROR(RowsAndColumns(ctx, *x, rows, &cols));
  if (cols != features) return ctx.Error(absl::StrCat("input has ", cols, " features, the model ", features));
  return ToFloats(*x);
}

class SvmClassifier final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<SvmClassifier>(new SvmClassifier());
    RETURN_IF_ERROR(k->svm_.Parse(info));
    k->per_class_ = info.AttrOr<std::vector<int64_t>>("vectors_per_class", {});
    k->prob_a_ = info.AttrOr<std::vector<float>>("prob_a", {});
    k->prob_b_ = info.AttrOr<std::vector<float>>("prob_b", {});
    k->vectors_ = info.AttrOr<std::vector<float>>("support_vectors", {});
    k->coefficients_ = info.AttrOr<std::vector<float>>("coefficients", {});
    k->rho_ = info.AttrOr<std::vector<float>>("rho", {});
    k->strings_ = info.AttrOr<std::vector<std::string>>("classlabels_strings", {});
    k->ints_ = info.AttrOr<std::vector<int64_t>>("classlabels_ints", {});
    ASSIGN_OR_RETURN(k->post_transform_, ParsePostTransform(info));
    if (k->strings_.empty() && k->ints_.empty()) return info.Error("one of classlabels_strings/ints must be set");
    if (k->coefficients_.empty() || k->rho_.empty()) return info.Error("coefficients and rho must be set");
    if (k->prob_a_.size() != k->prob_b_.size()) return info.Error("prob_a and prob_b differ in length");
    k->classes_ = static_cast<int64_t>(k->strings_.empty() ? k->ints_.size() : k->strings_.size());
    for (int64_t n : k->per_class_) {
      if (n < 0) return info.Error("vectors_per_class must not be negative");
      k->start_.push_back(k->vector_count_);
      k->vector_count_ += n;
    }
    const int64_t pairs = k->classes_ * (k->classes_ - 1) / 2;
    k->all_positive_ = std::all_of(k->coefficients_.begin(), k->coefficients_.end(), [](float v) { return v >= 0; });
    if (k->vector_count_ > 0) {
      k->features_ = static_cast<int64_t>(k->vectors_.size()) / k->vector_count_;
      if (static_cast<int64_t>(k->per_class_.size()) < k->classes_ ||
          static_cast<int64_t>(k->coefficients_.size()) < (k->classes_ - 1) * k->vector_count_ ||
          static_cast<int64_t>(k->rho_.size()) < pairs ||
          (!k->prob_a_.empty() && static_cast<int64_t>(k->prob_a_.size()) < pairs)) {
        return info.Error(absl::StrCat("vectors_per_class, coefficients, rho or prob_a/b are too short for ",
                                       k->classes_, " classes"));
      }
    } else {
      k->svm_.kernel = SvmKernel::kLinear;  // liblinear: one coefficient row per class
      k->features_ = static_cast<int64_t>(k->coefficients_.size()) / k->classes_;
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    int64_t rows = 0;
    ASSIGN_OR_RETURN(const std::vector<float> in, FeatureRows(ctx, features_, &rows));
    const bool svc = vector_count_ > 0;
    const bool proba = svc && !prob_a_.empty();
    const int64_t pairs = classes_ * (classes_ - 1) / 2;
    // Scores per row in Z, and how many of them the transform sees.
    int64_t columns = classes_, scored = classes_;
    int second = -1;  // how a single pair score gets its second column
    if (svc && !proba) {
      columns = classes_ > 2 ? pairs : 2;
      scored = pairs;
      if (classes_ <= 2) second = post_transform_ == PostTransform::kNone ? 2 : 0;
    }
    const bool strings = !strings_.empty();
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, {rows}, strings ? DataType::kString : DataType::kInt64));
    ASSIGN_OR_RETURN(Tensor * z, ctx.Output(1, {rows, columns}, DataType::kFloat));
    std::vector<float> kernels(vector_count_), pair_scores(pairs), r(classes_ * classes_);
    std::vector<int64_t> votes(classes_);
    for (int64_t n = 0; n < rows; ++n) {
      const float* row = in.data() + n * features_;
      float* out = z->mutable_data<float>() + n * columns;
      float max_weight = 0.0f;
      int64_t best = 0;
      if (!svc) {
        for (int64_t c = 0; c < classes_; ++c)
          out[c] = svm_.Apply(row, &coefficients_[c * features_], features_, rho_[0]);
        best = std::max_element(out, out + classes_) - out;
        max_weight = out[best];
      } else {
        for (int64_t v = 0; v < vector_count_; ++v)
          kernels[v] = svm_.Apply(row, &vectors_[v * features_], features_, 0);
        std::fill(votes.begin(), votes.end(), 0);
        int64_t index = 0;
        for (int64_t i = 0; i < classes_ - 1; ++i) {
          for (int64_t j = i + 1; j < classes_; ++j, ++index) {
            double sum = 0;
            for (int64_t m = 0; m < per_class_[i]; ++m) {
              sum += coefficients_[(j - 1) * vector_count_ + start_[i] + m] * kernels[start_[i] + m];
            }
            for (int64_t m = 0; m < per_class_[j]; ++m) {
              sum += coefficients_[i * vector_count_ + start_[j] + m] * kernels[start_[j] + m];
            }
            sum += rho_[index];
            pair_scores[index] = static_cast<float>(sum);
            ++votes[sum > 0 ? i : j];
          }
        }
        best = std::max_element(votes.begin(), votes.end()) - votes.begin();
        if (proba) {
          index = 0;
          for (int64_t i = 0; i < classes_ - 1; ++i) {
            for (int64_t j = i + 1; j < classes_; ++j, ++index) {
              // Platt: P(i beats j) = 1 - logistic(a * score + b), kept inside [1e-7, 1 - 1e-7].
              float p = 1.0f - Logistic(pair_scores[index] * prob_a_[index] + prob_b_[index]);
              p = std::min(std::max(p, 1.0e-7f), 1 - 1.0e-7f);
              r[i * classes_ + j] = p;
              r[j * classes_ + i] = 1 - p;
            }
          }
          MulticlassProbability(classes_, r, out);
        } else {
          std::copy(pair_scores.begin(), pair_scores.end(), out);
        }
      }
      int64_t label = best;
      if (pairs == 1 && !proba && !svc) {
        // Two liblinear classes: ONNX Runtime's thresholds on the top score.
        if ((all_positive_ && max_weight >= 0.5f) || (!all_positive_ && max_weight > 0)) label = 1;
      }
      if (strings) y->mutable_data<std::string>()[n] = strings_[label];
      else y->mutable_data<int64_t>()[n] = ints_[label];
      Transform(out, scored, second);
    }
    return absl::OkStatus();
  }

 private:
  // ONNX Runtime's in-place score update of one row: `n` scores, and for a
  // single pair score the second column per `second` (2: [-s, s], 0: [1 - p, p]).
  void Transform(float* s, int64_t n, int second) const {
    if (n > 1) {
      TransformScores(post_transform_, s, n);
      return;
    }
    if (n == 1 && post_transform_ == PostTransform::kProbit) {
      s[0] = Probit(s[0]);
    } else if (n == 1 && second == 2) {
      s[1] = s[0];
      s[0] = -s[0];
    } else if (n == 1 && second == 0) {
      const float p = post_transform_ == PostTransform::kLogistic ? Logistic(s[0]) : s[0];
      s[0] = 1.0f - p;
      s[1] = p;
    }
  }

  SvmCommon svm_;
  std::vector<int64_t> per_class_, start_;
  std::vector<float> prob_a_, prob_b_, vectors_, coefficients_, rho_;
  std::vector<std::string> strings_;
  std::vector<int64_t> ints_;
  PostTransform post_transform_ = PostTransform::kNone;
  int64_t classes_ = 0, vector_count_ = 0, features_ = 0;
  bool all_positive_ = true;
};

// One target: sum_v coefficients[v] * K(x, v) + rho[0], or x . coefficients +
// rho[0] without support vectors; one_class maps it to +1 / -1. ONNX Runtime
// ignores post_transform here.
class SvmRegressor final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<SvmRegressor>(new SvmRegressor());
    RETURN_IF_ERROR(k->svm_.Parse(info));
    k->vectors_ = info.AttrOr<std::vector<float>>("support_vectors", {});
    k->coefficients_ = info.AttrOr<std::vector<float>>("coefficients", {});
    k->rho_ = info.AttrOr<std::vector<float>>("rho", {});
    k->count_ = info.AttrOr<int64_t>("n_supports", 0);
    k->one_class_ = info.AttrOr<int64_t>("one_class", 0) != 0;
    if (k->coefficients_.empty() || k->rho_.empty()) return info.Error("coefficients and rho must be set");
    if (k->count_ > 0) {
      k->features_ = static_cast<int64_t>(k->vectors_.size()) / k->count_;
      if (static_cast<int64_t>(k->coefficients_.size()) < k->count_) {
        return info.Error(
            absl::StrCat("coefficients has ", k->coefficients_.size(), " values for ", k->count_, " support vectors"));
      }
    } else {
      k->svm_.kernel = SvmKernel::kLinear;
      k->features_ = static_cast<int64_t>(k->coefficients_.size());
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    int64_t rows = 0;
    ASSIGN_OR_RETURN(const std::vector<float> in, FeatureRows(ctx, features_, &rows));
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, {rows, 1}, DataType::kFloat));
    for (int64_t n = 0; n < rows; ++n) {
      const float* row = in.data() + n * features_;
      float v = 0.0f;
      if (count_ > 0) {
        for (int64_t s = 0; s < count_; ++s) {
          v += coefficients_[s] * svm_.Apply(row, &vectors_[s * features_], features_, 0);
        }
        v += rho_[0];
      } else {
        v = svm_.Apply(row, coefficients_.data(), features_, rho_[0]);
      }
      y->mutable_data<float>()[n] = one_class_ ? (v > 0 ? 1.0f : -1.0f) : v;
    }
    return absl::OkStatus();
  }

 private:
  SvmCommon svm_;
  std::vector<float> vectors_, coefficients_, rho_;
  int64_t count_ = 0, features_ = 0;
  bool one_class_ = false;
};

}  // namespace

void RegisterSvmKernels(KernelRegistry& r) {
  const std::vector<DataType> inputs = {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32};
  r.Register(KernelDefBuilder("SVMClassifier").Domain(kMlDomain).Since(1).Types("T1", inputs).Build(),
             MakeFactory<SvmClassifier>());
  r.Register(KernelDefBuilder("SVMRegressor").Domain(kMlDomain).Since(1).Types("T", inputs).Build(),
             MakeFactory<SvmRegressor>());
}

}  // namespace onyx
