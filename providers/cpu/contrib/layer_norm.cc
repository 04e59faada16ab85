// Normalizations of ONNX Runtime's contrib set, float, one row at a time:
//
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?)
//       s = input + skip (+ bias); output = (s - mean) / sqrt(var + eps) * gamma + beta
//       outputs: output, mean, inv_std_var (float, shape [..., 1]), s
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?)
//       the same with s / sqrt(mean(s^2) + eps) * gamma; mean is written as 0
//   LayerNormalization-1 (default domain, below ONNX's -17): over the
//       dimensions from `axis` on, outputs Y, Mean, InvStdDev
//   SimplifiedLayerNormalization-1 (default domain): X / sqrt(mean(X^2) + eps)
//       * scale, outputs Y, inv_std_var
//
// Skip is input's shape, or for a 3-D input (1, S, H) or (S, H), broadcast
// over the batch. Statistics have the input's shape with the normalized
// dimensions set to 1.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/contrib/norm_util.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {
namespace {

// Output `i` when the graph asks for it, else nullptr.
absl::StatusOr<float*> OptionalFloatOutput(OpKernelContext& ctx, int i, const Dims& dims) {
  if (i >= ctx.OutputCount() || !ctx.OutputRequested(i)) return nullptr;
  ASSIGN_OR_RETURN(Tensor* t, ctx.Output(i, dims, DataType::kFloat));
  return t->mutable_data<float>();
}

// `dims` with the dimensions from `axis` on set to 1.
Dims StatisticsDims(const Dims& dims, int64_t axis) {
  Dims out = dims;
  for (size_t i = static_cast<size_t>(axis); i < out.size(); ++i) out[i] = 1;
  return out;
}

int64_t RowGrain(int64_t width) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(width, 1)); }

class SkipLayerNorm final : public OpKernel {
 public:
  SkipLayerNorm(const OpKernelInfo& info, bool simplified)
      : simplified_(simplified), epsilon_(info.AttrOr<float>("epsilon", 1e-12f)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* input, FloatInput(ctx, 0, "input"));
    ASSIGN_OR_RETURN(const Tensor* skip, FloatInput(ctx, 1, "skip"));
    ASSIGN_OR_RETURN(const Tensor* gamma, FloatInput(ctx, 2, "gamma"));
    const int bias_index = simplified_ ? 3 : 4;
    const Tensor* beta = nullptr;
    const Tensor* bias = nullptr;
    if (!simplified_ && ctx.Input(3) != nullptr) {
      ASSIGN_OR_RETURN(beta, FloatInput(ctx, 3, "beta"));
    }
    if (ctx.Input(bias_index) != nullptr) {
      ASSIGN_OR_RETURN(bias, FloatInput(ctx, bias_index, "bias"));
    }
    const Dims& dims = input->dims();
    if (dims.size() != 2 && dims.size() != 3) {
      return ctx.Error("input must be 3-D (batch, sequence, hidden) or 2-D (tokens, hidden), received " +
                       DimsToString(dims));
    }
    const int64_t hidden = dims.back();
    const bool skip_ok =
        skip->dims() == dims ||
        (dims.size() == 3 && (skip->dims() == Dims{1, dims[1], hidden} || skip->dims() == Dims{dims[1], hidden}));
    if (!skip_ok) {
      return ctx.Error("skip must have input's shape " + DimsToString(dims) +
                       " or, for a 3-D input, (1, sequence, hidden) or (sequence, hidden); received " +
                       DimsToString(skip->dims()));
    }
    RETURN_IF_ERROR(RequireVector(ctx, *gamma, "gamma", hidden));
    if (beta != nullptr) RETURN_IF_ERROR(RequireVector(ctx, *beta, "beta", hidden));
    if (bias != nullptr) RETURN_IF_ERROR(RequireVector(ctx, *bias, "bias", hidden));

    ASSIGN_OR_RETURN(Tensor* output, ctx.Output(0, dims, DataType::kFloat));
    const Dims stat_dims = StatisticsDims(dims, static_cast<int64_t>(dims.size()) - 1);
    ASSIGN_OR_RETURN(float* mean_out, OptionalFloatOutput(ctx, 1, stat_dims));
    ASSIGN_OR_RETURN(float* inv_out, OptionalFloatOutput(ctx, 2, stat_dims));
    ASSIGN_OR_RETURN(float* sum_out, OptionalFloatOutput(ctx, 3, dims));

    const float* px = input->data<float>();
    const float* ps = skip->data<float>();
    const float* pg = gamma->data<float>();
    const float* pbeta = beta ? beta->data<float>() : nullptr;
    const float* pbias = bias ? bias->data<float>() : nullptr;
    float* py = output->mutable_data<float>();
    const int64_t skip_size = skip->num_elements();
    const int64_t rows = hidden == 0 ? 0 : input->num_elements() / hidden;
    const float eps = epsilon_;
    const bool simplified = simplified_;
    ParallelFor(rows, RowGrain(hidden), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t off = r * hidden;
        const float* x = px + off;
        const float* s = ps + off % skip_size;
        float* y = py + off;
        if (pbias != nullptr) {
          for (int64_t i = 0; i < hidden; ++i) y[i] = x[i] + s[i] + pbias[i];
        } else {
          for (int64_t i = 0; i < hidden; ++i) y[i] = x[i] + s[i];
        }
        if (sum_out != nullptr) std::copy(y, y + hidden, sum_out + off);
        float mean = 0.f, inv;
        if (simplified) {
          inv = 1.f / std::sqrt(RowSumSquares(y, hidden) / static_cast<float>(hidden) + eps);
        } else {
          float m2;
          RowMeanM2(y, hidden, &mean, &m2);
          inv = 1.f / std::sqrt(m2 / static_cast<float>(hidden) + eps);
        }
        NormalizeRow(y, hidden, mean, inv, pg, pbeta, y);
        if (mean_out != nullptr) mean_out[r] = mean;
        if (inv_out != nullptr) inv_out[r] = inv;
      }
    });
    return absl::OkStatus();
  }

 private:
  bool simplified_;
  float epsilon_;
};

// LayerNormalization-1 and SimplifiedLayerNormalization-1.
class LayerNorm final : public OpKernel {
 public:
  LayerNorm(const OpKernelInfo& info, bool simplified)
      : simplified_(simplified),
        axis_(info.AttrOr<int64_t>("axis", -1)),
        epsilon_(info.AttrOr<float>("epsilon", 1e-5f)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, FloatInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* scale, FloatInput(ctx, 1, "scale"));
    const Tensor* shift = nullptr;
    if (!simplified_ && ctx.Input(2) != nullptr) {
      ASSIGN_OR_RETURN(shift, FloatInput(ctx, 2, "B"));
    }
    auto axis = NormalizeAxis(axis_, x->rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    const int64_t width = NumElements(absl::MakeConstSpan(x->dims()).subspan(*axis));
    if (scale->num_elements() != width || (shift != nullptr && shift->num_elements() != width)) {
      return ctx.Error(absl::StrCat("scale", simplified_ ? "" : " and B", " must have ", width,
                                    " elements (X's dimensions from axis ", *axis, " on), received ",
                                    DimsToString(scale->dims()),
                                    shift != nullptr ? " and " + DimsToString(shift->dims()) : ""));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), DataType::kFloat));
    const Dims stat_dims = StatisticsDims(x->dims(), *axis);
    float* mean_out = nullptr;
    if (!simplified_) {
      ASSIGN_OR_RETURN(mean_out, OptionalFloatOutput(ctx, 1, stat_dims));
    }
    ASSIGN_OR_RETURN(float* inv_out, OptionalFloatOutput(ctx, simplified_ ? 1 : 2, stat_dims));
    const int64_t rows = width == 0 ? 0 : x->num_elements() / width;
    const float* px = x->data<float>();
    const float* pg = scale->data<float>();
    const float* pb = shift ? shift->data<float>() : nullptr;
    float* py = y->mutable_data<float>();
    if (rows == 0) return absl::OkStatus();
    // Without the statistics, oneDNN's vectorised primitive computes Y.
    if (!simplified_ && mean_out == nullptr && inv_out == nullptr &&
        DnnlLayerNormalization(px, rows, width, epsilon_, pg, pb, py).ok()) {
      return absl::OkStatus();
    }
    const float eps = epsilon_;
    const bool simplified = simplified_;
    ParallelFor(rows, RowGrain(width), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* row = px + r * width;
        float mean = 0.f, inv;
        if (simplified) {
          inv = 1.f / std::sqrt(RowSumSquares(row, width) / static_cast<float>(width) + eps);
        } else {
          float m2;
          RowMeanM2(row, width, &mean, &m2);
          inv = 1.f / std::sqrt(m2 / static_cast<float>(width) + eps);
        }
        NormalizeRow(row, width, mean, inv, pg, pb, py + r * width);
        if (mean_out != nullptr) mean_out[r] = mean;
        if (inv_out != nullptr) inv_out[r] = inv;
      }
    });
    return absl::OkStatus();
  }

 private:
  bool simplified_;
  int64_t axis_;
  float epsilon_;
};

template <bool kSimplified>
KernelFactory SkipFactory() {
  return [](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new SkipLayerNorm(info, kSimplified));
  };
}

template <bool kSimplified>
KernelFactory LayerNormFactory() {
  return [](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new LayerNorm(info, kSimplified));
  };
}

}  // namespace

void RegisterContribNormKernels(KernelRegistry& r) {
  r.Register(MicrosoftFloatKernel("SkipLayerNormalization"), SkipFactory<false>());
  r.Register(MicrosoftFloatKernel("SkipSimplifiedLayerNormalization"), SkipFactory<true>());
  // ONNX Runtime's own default-domain versions; opset 17 on is ONNX's
  // LayerNormalization, which the function inliner expands.
  r.Register(KernelDefBuilder("LayerNormalization").Since(1, 16).Types("T", {DataType::kFloat}).Build(),
             LayerNormFactory<false>());
  r.Register(KernelDefBuilder("SimplifiedLayerNormalization").Since(1).Types("T", {DataType::kFloat}).Build(),
             LayerNormFactory<true>());
}

}  // namespace onyx
