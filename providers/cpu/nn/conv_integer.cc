// ConvInteger (int32 output) and QLinearConv (requantized 8-bit output):
// inputs have their zero points subtracted (per tensor, or per output channel
// for the weights) and the convolution accumulates in int32. ConvInteger and
// QLinearConv with constant weights oneDNN takes (int8 with zero point 0,
// uint8 with 128) run oneDNN's int8 convolution (dnnl_conv_integer.h); the
// rest, the direct loop. QLinearConv requantizes as ONNX Runtime does.
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/quantize_util.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/nn/dnnl_conv_integer.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// The int32 convolution of (x - x_zp) and (w - w_zp[oc]).
absl::StatusOr<std::vector<int32_t>> IntegerConv(const OpKernelContext& ctx, const ConvAttributes& attrs, int64_t group,
                                                 const Tensor& x, const Tensor* x_zp, const Tensor& w,
                                                 const Tensor* w_zp, ConvShape* shape) {
  if (!Is8Bit(x.type()) || !Is8Bit(w.type())) {
    return ctx.Error(absl::StrCat("x and w must be int8 or uint8, received ", DataTypeName(x.type()), " and ",
                                  DataTypeName(w.type())));
  }
  auto s = ResolveConvShape(attrs, group, x.dims(), w.dims());
  if (!s.ok()) return ctx.Error(s.status().message());
  *shape = *s;
  const std::vector<int32_t> xzp = ZeroPoints(x_zp), wzp = ZeroPoints(w_zp);
  if (xzp.size() != 1) return ctx.Error(absl::StrCat("x_zero_point must be a scalar, has ", xzp.size(), " values"));
  if (wzp.size() != 1 && static_cast<int64_t>(wzp.size()) != s->out_channels) {
    return ctx.Error(absl::StrCat("w_zero_point has ", wzp.size(), " values, expected 1 or ", s->out_channels));
  }
  const std::vector<int32_t> xv = Dequantize8(x, xzp, 1);
  const std::vector<int32_t> wv = Dequantize8(w, wzp, w.num_elements() / std::max<int64_t>(1, s->out_channels));
  std::vector<int32_t> y(NumElements(s->out_dims));
  RETURN_IF_ERROR(ConvForward<int32_t>(xv.data(), wv.data(), s->batch, s->in_channels, s->out_channels, group,
                                       s->geometry, y.data()));
  return y;
}

class ConvInteger final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<ConvInteger>(new ConvInteger(info));
    const Tensor* w = info.ConstantInput(1);
    const Tensor* w_zp = info.HasInput(3) ? info.ConstantInput(3) : nullptr;
    if (w != nullptr && (!info.HasInput(3) || w_zp != nullptr)) {
      auto dnnl = DnnlIntegerConvolution::Create(kernel->attrs_, kernel->group_, *w, w_zp);
      if (dnnl.ok()) kernel->dnnl_ = *std::move(dnnl);
      if (!dnnl.ok() && !absl::IsUnimplemented(dnnl.status())) return info.Error(dnnl.status().message());
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "x"));
    ASSIGN_OR_RETURN(const Tensor* w, RequireInput(ctx, 1, "w"));
    const Tensor* x_zp = ctx.Input(2);
    if (dnnl_ != nullptr && (x->type() == DataType::kUint8 || x->type() == DataType::kInt8) &&
        (x_zp == nullptr || (x_zp->num_elements() == 1 && x_zp->type() == x->type()))) {
      auto out_dims = dnnl_->OutputDims(x->dims());
      if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
      ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, *out_dims, DataType::kInt32));
      const int32_t zp = x_zp == nullptr ? 0 : static_cast<int32_t>(ScalarAsInt64(*x_zp));
      absl::Status status = dnnl_->Run(*x, zp, *y);
      return status.ok() ? status : ctx.Error(status.message());
    }
    ConvShape shape;
    ASSIGN_OR_RETURN(std::vector<int32_t> acc, IntegerConv(ctx, attrs_, group_, *x, ctx.Input(2), *w, ctx.Input(3), &shape));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, shape.out_dims, DataType::kInt32));
    std::copy(acc.begin(), acc.end(), y->mutable_data<int32_t>());
    return absl::OkStatus();
  }

 private:
  explicit ConvInteger(const OpKernelInfo& info)
      : attrs_(ConvAttributes::FromInfo(info)), group_(info.AttrOr<int64_t>("group", 1)) {}

  ConvAttributes attrs_;
  int64_t group_;
  std::unique_ptr<DnnlIntegerConvolution> dnnl_;  // nullptr: the direct loop
};

// y = saturate(round(float(acc + bias[oc]) * (x_scale * w_scale[oc] / y_scale)) + y_zp),
// ONNX Runtime's requantization (the scale multiplied in that order, rounding
// half to even), over an [N, M, spatial] int32 result.
template <typename Q>
void Requantize(const int32_t* acc, const int32_t* bias, const std::vector<float>& scales, int32_t zero_point,
                int64_t batch, int64_t channels, int64_t spatial, Q* out) {
  ParallelFor(batch * channels, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, spatial)),
              [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t oc = row % channels;
      const float scale = scales[scales.size() == 1 ? 0 : oc];
      const int32_t b = bias == nullptr ? 0 : bias[oc];
      const int32_t* a = acc + row * spatial;
      Q* o = out + row * spatial;
      for (int64_t i = 0; i < spatial; ++i) o[i] = SaturateRound<Q>(static_cast<float>(a[i] + b) * scale, zero_point);
    }
  });
}

class QLinearConv final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<QLinearConv>(new QLinearConv(info));
    const Tensor* w = info.ConstantInput(3);
    const Tensor* w_zp = info.ConstantInput(5);
    if (w != nullptr && w_zp != nullptr) {
      auto dnnl = DnnlIntegerConvolution::Create(kernel->attrs_, kernel->group_, *w, w_zp);
      if (dnnl.ok()) kernel->dnnl_ = *std::move(dnnl);
      if (!dnnl.ok() && !absl::IsUnimplemented(dnnl.status())) return info.Error(dnnl.status().message());
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    static const char* kNames[] = {"x",       "x_scale",      "x_zero_point", "w",
                                   "w_scale", "w_zero_point", "y_scale",      "y_zero_point"};
    const Tensor* in[8];
    for (int i = 0; i < 8; ++i) {
      ASSIGN_OR_RETURN(in[i], RequireInput(ctx, i, kNames[i]));
    }
    // The int32 convolution, by oneDNN when it took the weights.
    Dims out_dims;
    const int32_t* acc = nullptr;
    std::vector<int32_t> reference;
    const Tensor& x = *in[0];
    const Tensor& x_zp = *in[2];
    if (dnnl_ != nullptr && Is8Bit(x.type()) && x_zp.type() == x.type() && x_zp.num_elements() == 1) {
      auto dims = dnnl_->OutputDims(x.dims());
      if (!dims.ok()) return ctx.Error(dims.status().message());
      out_dims = *dims;
      int32_t* buffer = KernelScratch<int32_t>(kScratchAccumulator, NumElements(out_dims));
      if (buffer == nullptr) return ctx.Error("cannot allocate the int32 accumulator");
      Tensor result = Tensor::Wrap(DataType::kInt32, out_dims, buffer);
      absl::Status status = dnnl_->Run(x, static_cast<int32_t>(ScalarAsInt64(x_zp)), result);
      if (!status.ok()) return ctx.Error(status.message());
      acc = buffer;
    } else {
      ConvShape shape;
      ASSIGN_OR_RETURN(reference, IntegerConv(ctx, attrs_, group_, x, &x_zp, *in[3], in[5], &shape));
      out_dims = shape.out_dims;
      acc = reference.data();
    }
    const int64_t batch = out_dims[0];
    const int64_t out_c = out_dims[1];
    const int64_t spatial = batch * out_c == 0 ? 0 : NumElements(out_dims) / (batch * out_c);
    const int32_t* bias = nullptr;
    if (const Tensor* b = ctx.Input(8)) {
      if (b->type() != DataType::kInt32 || b->num_elements() != out_c) {
        return ctx.Error(absl::StrCat("B must be int32 with ", out_c, " values, received ", DataTypeName(b->type()),
                                      " ", DimsToString(b->dims())));
      }
      bias = b->data<int32_t>();
    }
    const std::vector<float> x_scale = Scales(*in[1]), w_scale = Scales(*in[4]), y_scale = Scales(*in[6]);
    if (x_scale.size() != 1 || y_scale.size() != 1 ||
        (w_scale.size() != 1 && static_cast<int64_t>(w_scale.size()) != out_c)) {
      return ctx.Error(absl::StrCat("x_scale and y_scale must be scalars and w_scale have 1 or ", out_c,
                                    " values; received ", x_scale.size(), ", ", y_scale.size(), " and ",
                                    w_scale.size()));
    }
    std::vector<float> scales(w_scale.size());
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = x_scale[0] * w_scale[i] / y_scale[0];
    const Tensor& y_zp = *in[7];
    if (!Is8Bit(y_zp.type()) || y_zp.num_elements() != 1) return ctx.Error("y_zero_point must be an 8-bit scalar");
    const int32_t zp = static_cast<int32_t>(ScalarAsInt64(y_zp));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, y_zp.type()));
    if (y_zp.type() == DataType::kInt8) {
      Requantize(acc, bias, scales, zp, batch, out_c, spatial, y->mutable_data<int8_t>());
    } else {
      Requantize(acc, bias, scales, zp, batch, out_c, spatial, y->mutable_data<uint8_t>());
    }
    return absl::OkStatus();
  }

 private:
  explicit QLinearConv(const OpKernelInfo& info)
      : attrs_(ConvAttributes::FromInfo(info)), group_(info.AttrOr<int64_t>("group", 1)) {}

  ConvAttributes attrs_;
  int64_t group_;
  std::unique_ptr<DnnlIntegerConvolution> dnnl_;  // nullptr: the direct loop
};

}  // namespace

void RegisterConvIntegerKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("ConvInteger").Since(10).Build(), MakeFactory<ConvInteger>());
  r.Register(KernelDefBuilder("QLinearConv").Since(10).Build(), MakeFactory<QLinearConv>());
}

}  // namespace onyx
