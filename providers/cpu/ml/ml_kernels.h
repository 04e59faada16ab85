// The ai.onnx.ml family: kernels of the traditional-ML operators that
// scikit-learn, LightGBM and XGBoost converters emit, and the helpers they
// share (post transforms, attribute parsing). Semantics follow the ONNX spec
// and, where the spec is silent, ONNX Runtime 1.30's CPU kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/kernel_registry.h"
#include "framework/op_kernel.h"

namespace onyx {

inline constexpr char kMlDomain[] = "ai.onnx.ml";

void RegisterTreeEnsembleKernels(KernelRegistry& registry);  // tree_kernels.cc
void RegisterLinearKernels(KernelRegistry& registry);        // linear.cc
void RegisterSvmKernels(KernelRegistry& registry);           // svm.cc
void RegisterScaleKernels(KernelRegistry& registry);         // scale.cc: Scaler, Normalizer, Binarizer, Imputer
void RegisterEncoderKernels(KernelRegistry& registry);       // encoders.cc: OneHotEncoder, CategoryMapper
void RegisterLabelEncoderKernels(KernelRegistry& registry);  // label_encoder.cc
void RegisterFeatureKernels(KernelRegistry& registry);       // features.cc: ArrayFeatureExtractor, FeatureVectorizer

// The score transform of the classifiers and regressors.
enum class PostTransform { kNone, kLogistic, kSoftmax, kSoftmaxZero, kProbit };

// Parses the string attribute "post_transform" (NONE when absent).
absl::StatusOr<PostTransform> ParsePostTransform(const OpKernelInfo& info);

// ONNX Runtime's formulas, kept bit for bit: the logistic is computed on |x|
// and mirrored, the probit uses Winitzki's approximation of erf^-1 (so it is
// not the exact quantile), softmax subtracts the maximum and sums in float.
float Logistic(float x);
float Probit(float x);
void Softmax(float* v, int64_t n);
// Softmax over the entries that are not (near) zero; zeros stay zero.
void SoftmaxZero(float* v, int64_t n);
// Applies `t` to n >= 2 scores in place (NONE leaves them).
void TransformScores(PostTransform t, float* v, int64_t n);

// Reads the row count and feature count of a [N, C] or [C] input (a 1-D input
// is one row); INVALID_ARGUMENT for other ranks.
absl::Status RowsAndColumns(const OpKernelContext& ctx, const Tensor& x, int64_t* rows, int64_t* cols);

// Converts a float, double, int64 or int32 tensor to float values.
std::vector<float> ToFloats(const Tensor& x);

}  // namespace onyx
