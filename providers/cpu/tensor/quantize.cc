// QuantizeLinear and DequantizeLinear, per tensor (scalar scale), per axis
// (1-D scale along `axis`, opset 13) or blocked (opset 21: the scale has the
// input's rank and ceil(D / block_size) entries along `axis`, each covering
// block_size consecutive elements). Quantization rounds half to even and
// saturates to the output type: the zero point's, else output_dtype (21),
// else uint8. Arithmetic is in float for every scale type, as ONNX Runtime
// does; QuantizeLinear-23's `precision` is accepted and also computed in float.
// float8, 4-bit and float4 types are refused when the kernel is created.
#include <cmath>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/unsupported_types.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

// Which scale entry each element of the input uses.
struct QuantLayout {
  bool per_tensor = true;
  int64_t axis_len = 1;        // D, the input's extent along axis
  int64_t inner = 1;           // product of the input's dims after axis
  int64_t block = 0;           // 0: per axis; else the block size
  int64_t scale_axis_len = 1;  // the scale's extent along axis

  int64_t ScaleIndex(int64_t i) const {
    if (per_tensor) return 0;
    const int64_t a = (i / inner) % axis_len;
    if (block == 0) return a;
    const int64_t outer = i / (inner * axis_len);
    return (outer * scale_axis_len + a / block) * inner + i % inner;
  }
};

struct QuantParams {
  QuantLayout layout;
  std::vector<float> scale;
  std::vector<int32_t> zero_point;  // one 0 when absent
  DataType zero_point_type = DataType::kUndefined;

  int32_t ZeroPointAt(int64_t s) const { return zero_point.size() == 1 ? zero_point[0] : zero_point[s]; }
};

// Attributes shared by both ops.
// "QuantizeLinear-21 'q'": refusals of types name the version that allows them.
std::string VersionedLabel(const Node& node) {
  return absl::StrCat(node.op_type, "-", node.since_version, node.name.empty() ? "" : " '", node.name,
                      node.name.empty() ? "" : "'");
}

struct QuantAttrs {
  int64_t axis = 1;
  int64_t block_size = 0;
  int64_t output_dtype = 0;  // QuantizeLinear-21, DequantizeLinear-23
};

absl::StatusOr<QuantAttrs> ReadAttrs(const OpKernelInfo& info) {
  QuantAttrs a;
  a.axis = info.AttrOr<int64_t>("axis", 1);
  a.block_size = info.AttrOr<int64_t>("block_size", 0);
  a.output_dtype = info.AttrOr<int64_t>("output_dtype", 0);
  if (a.block_size < 0) return info.Error(absl::StrCat("block_size must be >= 0, received ", a.block_size));
  if (const char* newer = NewerElementTypeName(static_cast<int32_t>(a.output_dtype)); newer != nullptr) {
    return absl::UnimplementedError(absl::StrCat(VersionedLabel(info.node()), ": output_dtype ", newer,
                                                 " is not supported (onyx has no float8, 4-bit or float4 tensors)"));
  }
  if (a.output_dtype != 0 && !IsValidDataType(static_cast<int32_t>(a.output_dtype))) {
    return info.Error(absl::StrCat("output_dtype ", a.output_dtype, " is not an ONNX element type"));
  }
  return a;
}

absl::StatusOr<QuantLayout> Layout(const OpKernelContext& ctx, const Tensor& x, const Tensor& scale,
                                   const QuantAttrs& attrs) {
  QuantLayout l;
  if (scale.rank() == 0 || (scale.rank() == 1 && scale.num_elements() == 1)) return l;
  int64_t axis = attrs.axis;
  if (!NormalizeAxis(axis, x.rank())) {
    return ctx.Error(absl::StrCat("axis ", attrs.axis, " is out of range for input ", DimsToString(x.dims())));
  }
  l.per_tensor = false;
  l.axis_len = x.dims()[axis];
  for (int64_t a = axis + 1; a < x.rank(); ++a) l.inner *= x.dims()[a];
  if (attrs.block_size == 0) {
    if (scale.rank() != 1 || scale.dims()[0] != l.axis_len) {
      return ctx.Error(absl::StrCat("per-axis scale must be 1-D with ", l.axis_len, " entries (axis ", attrs.axis,
                                    " of input ", DimsToString(x.dims()), "), received ", DimsToString(scale.dims()),
                                    "; blocked quantization needs block_size"));
    }
    l.scale_axis_len = l.axis_len;
    return l;
  }
  l.block = attrs.block_size;
  Dims expected = x.dims();
  expected[axis] = (l.axis_len + l.block - 1) / l.block;
  if (scale.dims() != expected) {
    return ctx.Error(absl::StrCat("blocked scale must be ", DimsToString(expected), " for input ",
                                  DimsToString(x.dims()), ", axis ", attrs.axis, " and block_size ", l.block,
                                  ", received ", DimsToString(scale.dims())));
  }
  l.scale_axis_len = expected[axis];
  return l;
}

absl::StatusOr<QuantParams> ReadParams(const OpKernelContext& ctx, const Tensor& x, const QuantAttrs& attrs) {
  const Tensor& scale = *ctx.Input(1);
  const Tensor* zp = ctx.Input(2);
  if (zp != nullptr && zp->dims() != scale.dims()) {
    return ctx.Error(absl::StrCat("zero point ", DimsToString(zp->dims()), " must have the scale's shape ",
                                  DimsToString(scale.dims())));
  }
  QuantParams p;
  ASSIGN_OR_RETURN(p.layout, Layout(ctx, x, scale, attrs));
  Tensor scale_f = Tensor::Allocate(DataType::kFloat, scale.dims());
  if (scale.type() == DataType::kString || !CastElements(scale, scale_f).ok()) {
    return ctx.Error(absl::StrCat("scale must be floating point, received ", DataTypeName(scale.type())));
  }
  p.scale.assign(scale_f.data<float>(), scale_f.data<float>() + scale_f.num_elements());
  p.zero_point.assign(1, 0);
  if (zp != nullptr) {
    p.zero_point_type = zp->type();
    Tensor zp_i = Tensor::Allocate(DataType::kInt32, zp->dims());
    if (zp->type() == DataType::kString || !CastElements(*zp, zp_i).ok()) {
      return ctx.Error(absl::StrCat("zero point must be an integer, received ", DataTypeName(zp->type())));
    }
    p.zero_point.assign(zp_i.data<int32_t>(), zp_i.data<int32_t>() + zp_i.num_elements());
  }
  return p;
}

// UNIMPLEMENTED naming node and version when input i is declared with a newer
// element type (models built without value infos reach Compute instead).
absl::Status CheckDeclaredType(const OpKernelInfo& info, int i, const char* role) {
  const char* newer = NewerElementTypeName(static_cast<int32_t>(info.InputType(i)));
  if (newer == nullptr) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat(VersionedLabel(info.node()), ": ", role, " of type ", newer, " is not supported"));
}

class QuantizeLinear final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(QuantAttrs attrs, ReadAttrs(info));
    RETURN_IF_ERROR(CheckDeclaredType(info, 2, "y_zero_point"));
    return std::unique_ptr<OpKernel>(new QuantizeLinear(attrs));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    ASSIGN_OR_RETURN(QuantParams p, ReadParams(ctx, x, attrs_));
    DataType out_type = DataType::kUint8;
    if (p.zero_point_type != DataType::kUndefined) {
      out_type = p.zero_point_type;
      if (attrs_.output_dtype != 0 && attrs_.output_dtype != static_cast<int64_t>(out_type)) {
        return ctx.Error(absl::StrCat("output_dtype ", DataTypeName(static_cast<DataType>(attrs_.output_dtype)),
                                      " does not match the zero point's type ", DataTypeName(out_type)));
      }
    } else if (attrs_.output_dtype != 0) {
      out_type = static_cast<DataType>(attrs_.output_dtype);
    }
    Tensor xf = Tensor::Allocate(DataType::kFloat, x.dims());
    if (x.type() == DataType::kString || !CastElements(x, xf).ok()) {
      return ctx.Error(absl::StrCat("input must be numeric, received ", DataTypeName(x.type())));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), out_type));
    absl::Status s = DispatchTypes<uint8_t, int8_t, uint16_t, int16_t>(out_type, [&](auto tag) {
      using Q = decltype(tag);
      const float* in = xf.data<float>();
      Q* out = y->mutable_data<Q>();
      const float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
      ParallelFor(x.num_elements(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t s = p.layout.ScaleIndex(i);
          const float v = std::nearbyint(in[i] / p.scale[s]) + static_cast<float>(p.ZeroPointAt(s));
          out[i] = static_cast<Q>(std::clamp(v, lo, hi));
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(absl::StrCat("cannot quantize to ", DataTypeName(out_type), ": ", s.message()));
    return absl::OkStatus();
  }

 private:
  explicit QuantizeLinear(QuantAttrs attrs) : attrs_(attrs) {}

  QuantAttrs attrs_;
};

class DequantizeLinear final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(QuantAttrs attrs, ReadAttrs(info));
    RETURN_IF_ERROR(CheckDeclaredType(info, 0, "x"));
    RETURN_IF_ERROR(CheckDeclaredType(info, 2, "x_zero_point"));
    return std::unique_ptr<OpKernel>(new DequantizeLinear(attrs));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    ASSIGN_OR_RETURN(QuantParams p, ReadParams(ctx, x, attrs_));
    if (p.zero_point_type != DataType::kUndefined && p.zero_point_type != x.type()) {
      return ctx.Error(absl::StrCat("zero point is ", DataTypeName(p.zero_point_type), " but the input is ",
                                    DataTypeName(x.type())));
    }
    const DataType out_type =
        attrs_.output_dtype != 0 ? static_cast<DataType>(attrs_.output_dtype) : ctx.Input(1)->type();
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), out_type));
    // float output is written in place; other output types convert from float.
    Tensor yf = out_type == DataType::kFloat ? *y : Tensor::Allocate(DataType::kFloat, x.dims());
    RETURN_IF_ERROR((DispatchTypes<uint8_t, int8_t, uint16_t, int16_t, int32_t>(x.type(), [&](auto tag) {
      using Q = decltype(tag);
      const Q* in = x.data<Q>();
      float* out = yf.mutable_data<float>();
      ParallelFor(x.num_elements(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t s = p.layout.ScaleIndex(i);
          out[i] = static_cast<float>(static_cast<int64_t>(in[i]) - p.ZeroPointAt(s)) * p.scale[s];
        }
      });
      return absl::OkStatus();
    })));
    return out_type == DataType::kFloat ? absl::OkStatus() : CastElements(yf, *y);
  }

 private:
  explicit DequantizeLinear(QuantAttrs attrs) : attrs_(attrs) {}

  QuantAttrs attrs_;
};

}  // namespace

void RegisterQuantizeKernels(KernelRegistry& r) {
  // One kernel per op for every version: later versions only add granularity
  // (blocked), types and attributes whose defaults keep the earlier meaning.
  r.Register(KernelDefBuilder("QuantizeLinear").Since(10).Build(), MakeFactory<QuantizeLinear>());
  r.Register(KernelDefBuilder("DequantizeLinear").Since(10).Build(), MakeFactory<DequantizeLinear>());
}

}  // namespace onyx
