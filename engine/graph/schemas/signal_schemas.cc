// DFT-20: the axis moves from an attribute (default 1) to an optional int64
// input (default -2, the last signal axis), and inverse with onesided is the
// inverse of a one-sided transform (complex bins in, a real signal out).
#include <optional>

#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

namespace onyx::schemas {
namespace {

// A scalar int input known before run time (an initializer), else nullopt.
std::optional<int64_t> ConstantScalar(onnx::InferenceContext& ctx, size_t i) {
  if (ctx.getNumInputs() <= i || ctx.getInputType(i) == nullptr) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(i);
  if (t == nullptr) return std::nullopt;
  if (t->data_type() == onnx::TensorProto::INT32) {
    const auto v = onnx::ParseData<int32_t>(t);
    if (v.size() == 1) return v[0];
  } else if (t->data_type() == onnx::TensorProto::INT64) {
    const auto v = onnx::ParseData<int64_t>(t);
    if (v.size() == 1) return v[0];
  }
  return std::nullopt;
}

void InferDft(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int rank = in.dim_size();
  if (rank < 2) fail_shape_inference("input must have rank >= 2, received ", rank);
  const bool inverse = onnx::getAttribute(ctx, "inverse", 0) != 0;
  const bool onesided = onnx::getAttribute(ctx, "onesided", 0) != 0;
  const bool has_axis = ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr;
  const std::optional<int64_t> axis_value = has_axis ? ConstantScalar(ctx, 2) : std::optional<int64_t>(-2);
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  *out = in;
  auto* last = out->mutable_dim(rank - 1);
  last->Clear();
  last->set_dim_value(inverse && onesided ? 1 : 2);
  if (!axis_value) {
    for (int d = 0; d < rank - 1; ++d) out->mutable_dim(d)->Clear();
    return;
  }
  const int64_t axis = *axis_value < 0 ? *axis_value + rank : *axis_value;
  if (axis < 0 || axis >= rank - 1) {
    fail_shape_inference("axis ", *axis_value, " must index a dimension other than the last of a rank-", rank,
                         " input");
  }
  const bool has_length = ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr;
  std::optional<int64_t> n;
  if (has_length) {
    n = ConstantScalar(ctx, 1);
  } else if (in.dim(static_cast<int>(axis)).has_dim_value()) {
    const int64_t len = in.dim(static_cast<int>(axis)).dim_value();
    n = inverse && onesided ? 2 * (len - 1) : len;
  }
  auto* dim = out->mutable_dim(static_cast<int>(axis));
  dim->Clear();
  if (n) dim->set_dim_value(onesided && !inverse ? *n / 2 + 1 : *n);
}

onnx::OpSchema Dft20() {
  onnx::OpSchema s("DFT", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(20)
      .Attr("inverse", "Inverse transform (scaled by 1/n).", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("onesided", "Real input: keep bins [0, n/2]. With inverse: one-sided complex bins to a real signal.",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "input", "Signal [..., 1] (real) or [..., 2] (complex).", "T1")
      .Input(1, "dft_length", "Transform length; the signal is cut or zero-padded to it.", "T2",
             onnx::OpSchema::Optional)
      .Input(2, "axis", "Scalar axis of the transform, not the last; default -2.", "tensor(int64)",
             onnx::OpSchema::Optional)
      .Output(0, "output", "Transform, [..., 2] (or [..., 1] for an inverse one-sided transform).", "T1")
      .TypeConstraint("T1", FloatTypes(), "Signal types.")
      .TypeConstraint("T2", {"tensor(int32)", "tensor(int64)"}, "Length types.")
      .TypeAndShapeInferenceFunction(InferDft);
  return s;
}

}  // namespace

void RegisterSignalSchemas() { Register(Dft20()); }

}  // namespace onyx::schemas
