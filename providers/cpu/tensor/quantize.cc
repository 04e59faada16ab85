// QuantizeLinear and DequantizeLinear, per tensor (scalar scale) or per axis
// (1-D scale along `axis`, opset 13). Quantization rounds half to even and
// saturates to the zero point's type (uint8 when the zero point is absent).
#include <cmath>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

// Scale and zero point broadcast along one axis: element i uses entry
// (i / inner) % channels.
struct QuantParams {
  std::vector<float> scale;
  Tensor zero_point;  // undefined when absent
  int64_t channels = 1, inner = 1;
};

absl::StatusOr<QuantParams> ReadParams(const OpKernelContext& ctx, const Tensor& x, int64_t axis_attr) {
  const Tensor& scale = *ctx.Input(1);
  const Tensor* zp = ctx.Input(2);
  QuantParams p;
  if (scale.rank() > 1 || (zp != nullptr && zp->dims() != scale.dims())) {
    return ctx.Error(absl::StrCat("scale ", DimsToString(scale.dims()), " must be a scalar or 1-D",
                                  zp != nullptr ? absl::StrCat(" matching the zero point ", DimsToString(zp->dims()))
                                                : ""));
  }
  Tensor scale_f = Tensor::Allocate(DataType::kFloat, scale.dims());
  if (scale.type() == DataType::kString || !CastElements(scale, scale_f).ok()) {
    return ctx.Error(absl::StrCat("scale must be floating point, received ", DataTypeName(scale.type())));
  }
  p.scale.assign(scale_f.data<float>(), scale_f.data<float>() + scale_f.num_elements());
  if (zp != nullptr) p.zero_point = *zp;
  if (scale.rank() == 1 && scale.num_elements() != 1) {
    int64_t axis = axis_attr;
    if (!NormalizeAxis(axis, x.rank()) || x.dims()[axis] != scale.num_elements()) {
      return ctx.Error(absl::StrCat("per-axis scale of ", scale.num_elements(), " entries does not match axis ",
                                    axis_attr, " of input ", DimsToString(x.dims())));
    }
    p.channels = scale.num_elements();
    for (int64_t a = axis + 1; a < x.rank(); ++a) p.inner *= x.dims()[a];
  }
  return p;
}

template <typename Q>
int64_t ZeroPointAt(const QuantParams& p, int64_t c) {
  return p.zero_point.defined() ? static_cast<int64_t>(p.zero_point.data<Q>()[c]) : 0;
}

class QuantizeLinear final : public OpKernel {
 public:
  explicit QuantizeLinear(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", 1)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    ASSIGN_OR_RETURN(QuantParams p, ReadParams(ctx, x, axis_));
    const DataType out_type = p.zero_point.defined() ? p.zero_point.type() : DataType::kUint8;
    Tensor xf = Tensor::Allocate(DataType::kFloat, x.dims());
    if (x.type() == DataType::kString || !CastElements(x, xf).ok()) {
      return ctx.Error(absl::StrCat("input must be numeric, received ", DataTypeName(x.type())));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), out_type));
    return DispatchTypes<uint8_t, int8_t, uint16_t, int16_t>(out_type, [&](auto tag) {
      using Q = decltype(tag);
      const float* in = xf.data<float>();
      Q* out = y->mutable_data<Q>();
      const float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
      ParallelFor(x.num_elements(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t c = (i / p.inner) % p.channels;
          const float v = std::nearbyint(in[i] / p.scale[c]) + static_cast<float>(ZeroPointAt<Q>(p, c));
          out[i] = static_cast<Q>(std::clamp(v, lo, hi));
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_;
};

class DequantizeLinear final : public OpKernel {
 public:
  explicit DequantizeLinear(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", 1)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    ASSIGN_OR_RETURN(QuantParams p, ReadParams(ctx, x, axis_));
    if (p.zero_point.defined() && p.zero_point.type() != x.type()) {
      return ctx.Error(absl::StrCat("zero point is ", DataTypeName(p.zero_point.type()), " but the input is ",
                                    DataTypeName(x.type())));
    }
    const DataType out_type = ctx.Input(1)->type();
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), out_type));
    // float output is written in place; other scale types convert from float.
    Tensor yf = out_type == DataType::kFloat ? *y : Tensor::Allocate(DataType::kFloat, x.dims());
    RETURN_IF_ERROR((DispatchTypes<uint8_t, int8_t, uint16_t, int16_t, int32_t>(x.type(), [&](auto tag) {
      using Q = decltype(tag);
      const Q* in = x.data<Q>();
      float* out = yf.mutable_data<float>();
      ParallelFor(x.num_elements(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t c = (i / p.inner) % p.channels;
          out[i] = static_cast<float>(static_cast<int64_t>(in[i]) - ZeroPointAt<Q>(p, c)) * p.scale[c];
        }
      });
      return absl::OkStatus();
    })));
    return out_type == DataType::kFloat ? absl::OkStatus() : CastElements(yf, *y);
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterQuantizeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("QuantizeLinear").Since(10).Build(), MakeFactory<QuantizeLinear>());
  r.Register(KernelDefBuilder("DequantizeLinear").Since(10).Build(), MakeFactory<DequantizeLinear>());
}

}  // namespace onyx
