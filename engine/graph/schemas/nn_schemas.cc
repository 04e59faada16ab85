// NN ops of opsets 18-22: GroupNormalization-18/21, Mish-18, LpPool-18,
// AveragePool-19 (dilations), DeformConv-19/22, Gelu-20 and the
// Bitwise{And,Or,Xor,Not}-18 family. GridSample and AffineGrid are in
// grid_schemas.cc.
#include <algorithm>
#include <cmath>

#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

using onnx::AttributeProto;
using onnx::OpSchema;

std::vector<std::string> PoolTypes() { return {"tensor(float16)", "tensor(float)", "tensor(double)"}; }

std::vector<std::string> IntegerTypes() {
  return {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
          "tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)"};
}

OpSchema Unary(const char* name, int version, std::vector<std::string> types) {
  OpSchema s(name, __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(version)
      .Input(0, "X", "Input tensor.", "T")
      .Output(0, "Y", "Output tensor of the shape of X.", "T")
      .TypeConstraint("T", std::move(types), "Element types the op accepts.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

OpSchema GroupNormalization(int version) {
  const char* per = version >= 21 ? "Tensor of shape (C): one value per channel."
                                  : "Tensor of shape (num_groups): one value per group.";
  OpSchema s("GroupNormalization", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("epsilon", "Added to the variance to avoid division by zero.", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "Number of groups of channels; divides C.", AttributeProto::INT, true)
      .Input(0, "X", "Input of shape (N, C, D1, ..., Dn).", "T")
      .Input(1, "scale", per, "T")
      .Input(2, "bias", per, "T")
      .Output(0, "Y", "Output of the shape of X.", "T")
      .TypeConstraint("T", FloatTypes(), "Float types.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  if (version >= 21) {
    s.Attr("stash_type", "Element type (TensorProto code) the statistics are computed in.", AttributeProto::INT,
           static_cast<int64_t>(onnx::TensorProto::FLOAT));
  }
  return s;
}

// Output spatial size of a pooling or convolution window along one axis, as
// ONNX Runtime's pooling computes it: SAME_* pads sized for the undilated
// kernel to cover ceil(in / stride) windows, the count divided with
// truncation toward zero (ceil_mode: in float, rounded up, and a last window
// starting in the end padding dropped).
int64_t WindowCount(const std::string& auto_pad, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                    int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t needed = ((in + stride - 1) / stride - 1) * stride + kernel - in;
    pad_begin = auto_pad == "SAME_UPPER" ? needed / 2 : (needed + 1) / 2;
    pad_end = needed - pad_begin;
  } else if (auto_pad == "VALID") {
    pad_begin = pad_end = 0;
  }
  const int64_t span = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  int64_t out = ceil_mode ? static_cast<int64_t>(std::ceil(static_cast<float>(span) / stride + 1)) : span / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  if (out < 0) fail_shape_inference("the window (", kernel, " with dilation ", dilation, ") exceeds the padded input");
  return out;
}

// Y = (N, channels, windows...) for a pooling op (channels from X) or a
// convolution (channels and, without kernel_shape, the kernel from W).
void InferWindowed(onnx::InferenceContext& ctx, bool conv) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || (conv && !onnx::hasInputShape(ctx, 1))) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  if (x.dim_size() < 3) fail_shape_inference("X must have rank >= 3, received rank ", x.dim_size());
  const size_t n = static_cast<size_t>(x.dim_size() - 2);
  std::vector<int64_t> kernel, strides, dilations, pads;
  if (!onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel)) {
    if (!conv) fail_shape_inference("attribute kernel_shape is required");
    const auto& w = onnx::getInputShape(ctx, 1);
    for (int i = 2; i < w.dim_size(); ++i) {
      if (!w.dim(i).has_dim_value()) return;
      kernel.push_back(w.dim(i).dim_value());
    }
  }
  if (!onnx::getRepeatedAttribute(ctx, "strides", strides)) strides.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "dilations", dilations)) dilations.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "pads", pads)) pads.assign(2 * n, 0);
  if (kernel.size() != n || strides.size() != n || dilations.size() != n || pads.size() != 2 * n) {
    fail_shape_inference("kernel_shape, strides and dilations need ", n, " values and pads ", 2 * n,
                         " for an input of rank ", x.dim_size());
  }
  for (size_t i = 0; i < n; ++i) {
    if (kernel[i] <= 0 || strides[i] <= 0 || dilations[i] <= 0) {
      fail_shape_inference("kernel_shape, strides and dilations must be positive");
    }
  }
  const auto* auto_pad_attr = ctx.getAttribute("auto_pad");
  const std::string auto_pad = auto_pad_attr != nullptr ? auto_pad_attr->s() : "NOTSET";
  const bool ceil_mode = onnx::getAttribute(ctx, "ceil_mode", 0) != 0;
  auto* y = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  *y->add_dim() = x.dim(0);
  if (conv) {
    *y->add_dim() = onnx::getInputShape(ctx, 1).dim(0);
  } else {
    *y->add_dim() = x.dim(1);
  }
  for (size_t i = 0; i < n; ++i) {
    auto* d = y->add_dim();
    if (!x.dim(static_cast<int>(i) + 2).has_dim_value()) continue;
    d->set_dim_value(WindowCount(auto_pad, x.dim(static_cast<int>(i) + 2).dim_value(), kernel[i], strides[i],
                                 dilations[i], pads[i], pads[i + n], ceil_mode));
  }
}

OpSchema& PoolAttributes(OpSchema& s) {
  s.Attr("kernel_shape", "Window size along each spatial axis.", AttributeProto::INTS)
      .Attr("strides", "Stride along each spatial axis (default 1).", AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("dilations", "Dilation along each spatial axis (default 1).", AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("pads", "Padding [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (default 0).", AttributeProto::INTS,
            onnx::OPTIONAL_VALUE)
      .Attr("auto_pad", "NOTSET, SAME_UPPER, SAME_LOWER or VALID (deprecated).", AttributeProto::STRING,
            std::string("NOTSET"))
      .Attr("ceil_mode", "Output size rounded up (1) or down (0).", AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "X", "Input of shape (N, C, D1, ..., Dn).", "T")
      .Output(0, "Y", "Pooled output.", "T")
      .TypeConstraint("T", PoolTypes(), "Float types.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) { InferWindowed(ctx, false); });
  return s;
}

OpSchema AveragePool19() {
  OpSchema s("AveragePool", __FILE__, __LINE__);
  s.SetDomain("").SinceVersion(19).Attr("count_include_pad", "Divide by the window size including padding (1).",
                                        AttributeProto::INT, static_cast<int64_t>(0));
  PoolAttributes(s);
  return s;
}

OpSchema LpPool18() {
  OpSchema s("LpPool", __FILE__, __LINE__);
  s.SetDomain("").SinceVersion(18).Attr("p", "The p of the Lp norm.", AttributeProto::INT, static_cast<int64_t>(2));
  PoolAttributes(s);
  return s;
}

OpSchema DeformConv(int version) {
  std::vector<std::string> types = PoolTypes();
  if (version >= 22) types.push_back("tensor(bfloat16)");
  OpSchema s("DeformConv", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("kernel_shape", "Kernel spatial shape (default: from W).", AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("strides", "Stride along each spatial axis (default 1).", AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("dilations", "Dilation along each spatial axis (default 1).", AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("pads", "Padding [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (default 0).", AttributeProto::INTS,
            onnx::OPTIONAL_VALUE)
      .Attr("group", "Number of groups of input and output channels.", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("offset_group", "Number of groups of input channels sharing one offset (and mask).", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "X", "Input of shape (N, C, D1, ..., Dn).", "T")
      .Input(1, "W", "Weights of shape (oC, C/group, k1, ..., kn).", "T")
      .Input(2, "offset", "Offsets of shape (N, offset_group * n * k1 * ... * kn, o1, ..., on).", "T")
      .Input(3, "B", "Bias of shape (oC); zeros when omitted.", "T", OpSchema::Optional)
      .Input(4, "mask", "Mask of shape (N, offset_group * k1 * ... * kn, o1, ..., on); ones when omitted.", "T",
             OpSchema::Optional)
      .Output(0, "Y", "Output of shape (N, oC, o1, ..., on).", "T")
      .TypeConstraint("T", std::move(types), "Float types.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) { InferWindowed(ctx, true); });
  return s;
}

OpSchema Gelu20() {
  OpSchema s("Gelu", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(20)
      .Attr("approximate", "none (erf form) or tanh (tanh approximation).", AttributeProto::STRING, std::string("none"))
      .Input(0, "X", "Input tensor.", "T")
      .Output(0, "Y", "Output tensor of the shape of X.", "T")
      .TypeConstraint("T", FloatTypes(), "Float types.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

OpSchema BitwiseBinary(const char* name) {
  OpSchema s(name, __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(18)
      .Input(0, "A", "First operand.", "T")
      .Input(1, "B", "Second operand (numpy broadcasting).", "T")
      .Output(0, "C", "Result.", "T")
      .TypeConstraint("T", IntegerTypes(), "Integer types.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (onnx::hasNInputShapes(ctx, 2)) {
          onnx::bidirectionalBroadcastShapeInference(ctx.getInputType(0)->tensor_type().shape(),
                                                     ctx.getInputType(1)->tensor_type().shape(),
                                                     *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
        }
      });
  return s;
}

}  // namespace

void RegisterNnSchemas() {
  Register(GroupNormalization(18));
  Register(GroupNormalization(21));
  Register(Unary("Mish", 18, {"tensor(float16)", "tensor(float)", "tensor(double)"}));
  Register(LpPool18());
  Register(AveragePool19());
  Register(DeformConv(19));
  Register(DeformConv(22));
  Register(Gelu20());
  for (const char* name : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) Register(BitwiseBinary(name));
  Register(Unary("BitwiseNot", 18, IntegerTypes()));
  RegisterGridSchemas();
}

}  // namespace onyx::schemas
