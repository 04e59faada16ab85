// Conv (N-D, groups, dilations, pads, auto_pad). Float convolutions with
// constant weights and 1 to 3 spatial dims run oneDNN's convolution primitive
// (dnnl_conv.h: its own layouts, weights reordered once, bias as a post-op);
// the rest (weights computed at run time, double, float16/bfloat16 computed
// in float) take im2col per image and group, then one gemm.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/nn/dnnl_conv.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

class Conv final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(std::unique_ptr<DnnlConvolution> dnnl, CreateDnnlConvolutionFor(info, ConvPostOps{}));
    return std::unique_ptr<OpKernel>(new Conv(info, std::move(dnnl)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    if (dnnl_ != nullptr && x_in->type() == DataType::kFloat) {
      auto out_dims = dnnl_->OutputDims(x_in->dims());
      if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
      ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *out_dims, DataType::kFloat));
      absl::Status status = dnnl_->Run(*x_in, nullptr, *y);
      return status.ok() ? status : ctx.Error(status.message());
    }
    ASSIGN_OR_RETURN(const Tensor* w_in, RequireInput(ctx, 1, "W"));
    const Tensor* b_in = ctx.Input(2);
    auto shape = ResolveConvShape(attrs_, group_, x_in->dims(), w_in->dims());
    if (!shape.ok()) return ctx.Error(shape.status().message());
    const ConvShape& s = *shape;
    if (b_in != nullptr && b_in->num_elements() != s.out_channels) {
      return ctx.Error(absl::StrCat("bias has ", b_in->num_elements(), " values, expected ", s.out_channels));
    }
    const Tensor x = UpcastToFloat(*x_in), w = UpcastToFloat(*w_in);
    const Tensor bias = b_in != nullptr ? UpcastToFloat(*b_in) : Tensor();
    if (x.type() != w.type() || (b_in != nullptr && bias.type() != x.type())) {
      return ctx.Error(absl::StrCat("X, W and B types differ: ", DataTypeName(x_in->type()), ", ",
                                    DataTypeName(w_in->type()), b_in ? ", " : "",
                                    b_in ? DataTypeName(b_in->type()) : ""));
    }
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, s.out_dims, x_in->type()));
    Tensor y = IsHalfLike(x_in->type()) ? Tensor::Allocate(DataType::kFloat, s.out_dims) : *y_out;
    const int64_t out_size = NumElements(s.geometry.out);
    RETURN_IF_ERROR(DispatchList(FloatCompute{}, x.type(), [&](auto tag) -> absl::Status {
      using T = decltype(tag);
      T* py = y.mutable_data<T>();
      RETURN_IF_ERROR(
          ConvForward<T>(x.data<T>(), w.data<T>(), s.batch, s.in_channels, s.out_channels, group_, s.geometry, py));
      if (b_in != nullptr) {
        const T* pb = bias.data<T>();
        for (int64_t nc = 0; nc < s.batch * s.out_channels; ++nc) {
          T* row = py + nc * out_size;
          const T bv = pb[nc % s.out_channels];
          for (int64_t i = 0; i < out_size; ++i) row[i] += bv;
        }
      }
      return absl::OkStatus();
    }));
    if (IsHalfLike(x_in->type())) DowncastFromFloat(y, *y_out);
    return absl::OkStatus();
  }

 private:
  Conv(const OpKernelInfo& info, std::unique_ptr<DnnlConvolution> dnnl)
      : attrs_(ConvAttributes::FromInfo(info)), group_(info.AttrOr<int64_t>("group", 1)), dnnl_(std::move(dnnl)) {}

  ConvAttributes attrs_;
  int64_t group_;
  std::unique_ptr<DnnlConvolution> dnnl_;  // nullptr: the im2col path
};

}  // namespace

void RegisterConvKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Conv").Since(1).Types("T", kFloatTypes).Build(), MakeFactory<Conv>());
}

}  // namespace onyx
