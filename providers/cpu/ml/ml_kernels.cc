#include "providers/cpu/ml/ml_kernels.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterMlKernels(KernelRegistry& r) {
  RegisterTreeEnsembleKernels(r);
  RegisterLinearKernels(r);
  RegisterSvmKernels(r);
  RegisterScaleKernels(r);
  RegisterEncoderKernels(r);
  RegisterLabelEncoderKernels(r);
  RegisterFeatureKernels(r);
}

absl::StatusOr<PostTransform> ParsePostTransform(const OpKernelInfo& info) {
  const std::string s = info.AttrOr<std::string>("post_transform", "NONE");
  if (s == "NONE") return PostTransform::kNone;
  if (s == "LOGISTIC") return PostTransform::kLogistic;
  if (s == "SOFTMAX") return PostTransform::kSoftmax;
  if (s == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (s == "PROBIT") return PostTransform::kProbit;
  return info.Error(
      absl::StrCat("post_transform '", s, "' is not one of NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT"));
}

float Logistic(float x) {
  const float v = 1.0f / (1.0f + std::exp(-std::abs(x)));
  return x < 0 ? 1.0f - v : v;
}

float Probit(float x) {
  // erf^-1 by Winitzki's approximation with a = 0.147, as ONNX Runtime does.
  float y = 2.0f * x - 1.0f;
  const float sign = y < 0 ? -1.0f : 1.0f;
  y = (1.0f - y) * (1.0f + y);
  const float ln = std::log(y);
  const float v = 2.0f / (static_cast<float>(M_PI) * 0.147f) + 0.5f * ln;
  const float v2 = 1.0f / 0.147f * ln;
  const float v3 = -v + std::sqrt(v * v - v2);
  return static_cast<float>(M_SQRT2) * (sign * std::sqrt(v3));
}

void Softmax(float* v, int64_t n) {
  float max = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) max = v[i] > max ? v[i] : max;
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    v[i] = std::exp(v[i] - max);
    sum += v[i];
  }
  for (int64_t i = 0; i < n; ++i) v[i] /= sum;
}

void SoftmaxZero(float* v, int64_t n) {
  float max = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) max = v[i] > max ? v[i] : max;
  const float exp_neg_max = std::exp(-max);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] > 0.0000001f || v[i] < -0.0000001f) {
      v[i] = std::exp(v[i] - max);
      sum += v[i];
    } else {
      v[i] *= exp_neg_max;
    }
  }
  for (int64_t i = 0; i < n; ++i) v[i] /= sum;
}

void TransformScores(PostTransform t, float* v, int64_t n) {
  switch (t) {
    case PostTransform::kNone: break;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) v[i] = Logistic(v[i]);
      break;
    case PostTransform::kSoftmax: Softmax(v, n); break;
    case PostTransform::kSoftmaxZero: SoftmaxZero(v, n); break;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) v[i] = Probit(v[i]);
      break;
  }
}

absl::Status RowsAndColumns(const OpKernelContext& ctx, const Tensor& x, int64_t* rows, int64_t* cols) {
  if (x.rank() == 1) {
    *rows = 1;
    *cols = x.dims()[0];
  } else if (x.rank() == 2) {
    *rows = x.dims()[0];
    *cols = x.dims()[1];
  } else {
    return ctx.Error(absl::StrCat("input must be [N, C] or [C], received ", DimsToString(x.dims())));
  }
  return absl::OkStatus();
}

std::vector<float> ToFloats(const Tensor& x) {
  std::vector<float> out(x.num_elements());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    switch (x.type()) {
      case DataType::kFloat: out[i] = x.data<float>()[i]; break;
      case DataType::kDouble: out[i] = static_cast<float>(x.data<double>()[i]); break;
      case DataType::kInt64: out[i] = static_cast<float>(x.data<int64_t>()[i]); break;
      case DataType::kInt32: out[i] = static_cast<float>(x.data<int32_t>()[i]); break;
      default: break;
    }
  }
  return out;
}

}  // namespace onyx
