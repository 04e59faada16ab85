// com.microsoft element-wise activations, float:
//   Gelu(X)          0.5 x (1 + erf(x / sqrt 2))
//   FastGelu(X, b?)  0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))), v = x + b
//   BiasGelu(A, B)   Gelu(A + B)
//   QuickGelu(X)     x * sigmoid(alpha x)
//   BiasAdd(X, b, s) x + b + s
// Biases run along the last dimension and must be 1-D of its length (ONNX
// Runtime refuses other shapes). The activations themselves are oneDNN's
// vectorised eltwise primitives (gelu_erf, gelu_tanh, swish), applied in place
// after the bias add.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {
namespace {

// y = x + bias (bias along the last dimension).
void AddRowBias(const float* x, const float* bias, int64_t n, int64_t width, float* y) {
  const int64_t rows = width == 0 ? 0 : n / width;
  ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * width;
      float* yr = y + r * width;
      for (int64_t i = 0; i < width; ++i) yr[i] = xr[i] + bias[i];
    }
  });
}

// An activation by one oneDNN eltwise algorithm, with an optional bias input.
class BiasActivation final : public OpKernel {
 public:
  BiasActivation(dnnl::algorithm algorithm, float alpha, int bias_input, const char* bias_name)
      : algorithm_(algorithm), alpha_(alpha), bias_input_(bias_input), bias_name_(bias_name) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, FloatInput(ctx, 0, "X"));
    const Tensor* bias = bias_input_ >= 0 ? ctx.Input(bias_input_) : nullptr;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), DataType::kFloat));
    const int64_t n = x->num_elements();
    const float* src = x->data<float>();
    float* py = y->mutable_data<float>();
    if (bias != nullptr) {
      const int64_t width = x->rank() == 0 ? 1 : x->dims().back();
      ASSIGN_OR_RETURN(bias, FloatInput(ctx, bias_input_, bias_name_));
      RETURN_IF_ERROR(RequireVector(ctx, *bias, bias_name_, width));
      AddRowBias(src, bias->data<float>(), n, width, py);
      src = py;
    }
    if (n == 0) return absl::OkStatus();
    absl::Status status = DnnlEltwise(algorithm_, alpha_, 0.f, src, py, n);
    return status.ok() ? status : ctx.Error(status.message());
  }

 private:
  dnnl::algorithm algorithm_;
  float alpha_;
  int bias_input_;  // -1: none
  const char* bias_name_;
};

class BiasAdd final : public OpKernel {
 public:
  explicit BiasAdd(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, FloatInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* bias, FloatInput(ctx, 1, "bias"));
    ASSIGN_OR_RETURN(const Tensor* skip, FloatInput(ctx, 2, "skip"));
    if (x->rank() != 3) return ctx.Error("X must be 3-D (N, S, C), received " + DimsToString(x->dims()));
    RETURN_IF_ERROR(RequireVector(ctx, *bias, "bias", x->dims()[2]));
    if (skip->dims() != x->dims()) {
      return ctx.Error("skip must have X's shape " + DimsToString(x->dims()) + ", received " +
                       DimsToString(skip->dims()));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), DataType::kFloat));
    const int64_t width = x->dims()[2];
    const float* px = x->data<float>();
    const float* pb = bias->data<float>();
    const float* ps = skip->data<float>();
    float* py = y->mutable_data<float>();
    const int64_t rows = width == 0 ? 0 : x->num_elements() / width;
    ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin * width; i < end * width; ++i) py[i] = px[i] + pb[i % width] + ps[i];
    });
    return absl::OkStatus();
  }
};

KernelFactory Activation(dnnl::algorithm algorithm, int bias_input, const char* bias_name) {
  return [=](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    const float alpha = algorithm == dnnl::algorithm::eltwise_swish ? info.AttrOr<float>("alpha", 1.702f) : 0.f;
    return std::unique_ptr<OpKernel>(new BiasActivation(algorithm, alpha, bias_input, bias_name));
  };
}

}  // namespace

void RegisterContribActivationKernels(KernelRegistry& r) {
  r.Register(MicrosoftFloatKernel("Gelu"), Activation(dnnl::algorithm::eltwise_gelu_erf, -1, nullptr));
  r.Register(MicrosoftFloatKernel("FastGelu"), Activation(dnnl::algorithm::eltwise_gelu_tanh, 1, "bias"));
  r.Register(MicrosoftFloatKernel("BiasGelu"), Activation(dnnl::algorithm::eltwise_gelu_erf, 1, "B"));
  r.Register(MicrosoftFloatKernel("QuickGelu"), Activation(dnnl::algorithm::eltwise_swish, -1, nullptr));
  r.Register(MicrosoftFloatKernel("BiasAdd"), MakeFactory<BiasAdd>());
}

}  // namespace onyx
