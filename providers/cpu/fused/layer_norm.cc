// com.onyx LayerNormalization(X, scale, bias): normalises over the last axis,
// y = (x - mean) / sqrt(var + epsilon) * scale + bias, float, by oneDNN's
// vectorised layer normalization (the scalar loop below, with double sums,
// took 8% of ConvNeXt) or, when oneDNN refuses the shape, that loop.
#include <cmath>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {
namespace {

class LayerNorm final : public OpKernel {
 public:
  explicit LayerNorm(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", -1)), epsilon_(info.AttrOr<float>("epsilon", 1e-5f)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor& x = *ctx.Input(0);
    const Tensor& scale = *ctx.Input(1);
    const Tensor* bias = ctx.Input(2);
    if (x.type() != DataType::kFloat || x.rank() == 0) return ctx.Error("expects a float tensor of rank >= 1");
    if (axis_ != -1 && axis_ != x.rank() - 1) return ctx.Error("only the last axis is supported");
    const int64_t len = x.dims().back();
    if (scale.num_elements() != len || (bias && bias->num_elements() != len)) {
      return ctx.Error("scale/bias must have " + std::to_string(len) + " elements");
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), x.type()));
    const int64_t rows = len == 0 ? 0 : x.num_elements() / len;
    const float* px = x.data<float>();
    const float* pg = scale.data<float>();
    const float* pb = bias ? bias->data<float>() : nullptr;
    float* py = y->mutable_data<float>();
    const float eps = epsilon_;
    if (rows > 0 && len > 0) {
      absl::Status status = DnnlLayerNormalization(px, rows, len, eps, pg, pb, py);
      if (status.ok()) return status;
    }
    ParallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* row = px + r * len;
        float* out = py + r * len;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < len; ++i) sum += row[i];
        const float mean = static_cast<float>(sum / len);
        for (int64_t i = 0; i < len; ++i) sq += (row[i] - mean) * (row[i] - mean);
        const float inv = 1.f / std::sqrt(static_cast<float>(sq / len) + eps);
        for (int64_t i = 0; i < len; ++i) out[i] = (row[i] - mean) * inv * pg[i] + (pb ? pb[i] : 0.f);
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
  float epsilon_;
};

}  // namespace

void RegisterLayerNormKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("LayerNormalization").Domain(kOnyxDomain).Build(), MakeFactory<LayerNorm>());
}

}  // namespace onyx
