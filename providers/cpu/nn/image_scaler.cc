// ImageScaler (an experimental ONNX op, in opsets 1-9; older image models
// such as the model zoo's Tiny YOLOv2 start with it): y[n, c, ...] =
// scale * x[n, c, ...] + bias[c]. The checker has no schema for it and warns;
// the kernel checks the attributes itself.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

class ImageScaler final : public OpKernel {
 public:
  explicit ImageScaler(const OpKernelInfo& info)
      : scale_(info.AttrOr<float>("scale", 1.f)), bias_(info.AttrOr<std::vector<float>>("bias", {})) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "input"));
    if (x_in->rank() < 2) {
      return ctx.Error("input must be [N, C, ...], received " + DimsToString(x_in->dims()));
    }
    if (x_in->type() != DataType::kFloat && !IsHalfLike(x_in->type())) {
      return ctx.Error(absl::StrCat("input must be float, float16 or bfloat16, received ",
                                    DataTypeName(x_in->type())));
    }
    const int64_t channels = x_in->dims()[1];
    if (!bias_.empty() && static_cast<int64_t>(bias_.size()) != channels) {
      return ctx.Error(absl::StrCat("attribute 'bias' has ", bias_.size(), " values, expected ", channels,
                                    " (one per channel of ", DimsToString(x_in->dims()), ")"));
    }
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, x_in->dims(), x_in->type()));
    const Tensor x = UpcastToFloat(*x_in);
    Tensor y = IsHalfLike(x_in->type()) ? Tensor::Allocate(DataType::kFloat, x_in->dims()) : *y_out;
    const int64_t planes = x_in->dims()[0] * channels;
    const int64_t size = planes == 0 ? 0 : x.num_elements() / planes;
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    ParallelFor(planes, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, size)), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float bias = bias_.empty() ? 0.f : bias_[p % channels];
        const float* src = px + p * size;
        float* dst = py + p * size;
        for (int64_t i = 0; i < size; ++i) dst[i] = scale_ * src[i] + bias;
      }
    });
    if (IsHalfLike(x_in->type())) DowncastFromFloat(y, *y_out);
    return absl::OkStatus();
  }

 private:
  float scale_;
  std::vector<float> bias_;
};

}  // namespace

void RegisterImageScalerKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("ImageScaler").Since(1).Build(), MakeFactory<ImageScaler>());
}

}  // namespace onyx
