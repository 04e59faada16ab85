// The string ops of opset 20: StringConcat (element-wise, broadcasting),
// StringSplit (substrings padded to the longest split, and their counts) and
// RegexFullMatch (RE2 syntax).
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

onnx::OpSchema StringConcat() {
  onnx::OpSchema s("StringConcat", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(20)
      .Input(0, "X", "Left strings.", "T")
      .Input(1, "Y", "Right strings, broadcast against X.", "T")
      .Output(0, "Z", "X[i] followed by Y[i].", "T")
      .TypeConstraint("T", {"tensor(string)"}, "Strings.")
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

onnx::OpSchema StringSplit() {
  onnx::OpSchema s("StringSplit", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(20)
      .Attr("delimiter", "Separator; absent or empty splits on runs of whitespace.", onnx::AttributeProto::STRING,
            onnx::OPTIONAL_VALUE)
      .Attr("maxsplit", "Most splits per string; absent or negative: no limit.", onnx::AttributeProto::INT,
            onnx::OPTIONAL_VALUE)
      .Input(0, "X", "Strings to split.", "T1")
      .Output(0, "Y", "X's shape plus one axis: the substrings, padded with empty strings.", "T2")
      .Output(1, "Z", "Number of substrings of each string.", "T3")
      .TypeConstraint("T1", {"tensor(string)"}, "Input strings.")
      .TypeConstraint("T2", {"tensor(string)"}, "Substrings.")
      .TypeConstraint("T3", {"tensor(int64)"}, "Counts.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::STRING);
        onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT64);
        if (!onnx::hasInputShape(ctx, 0)) return;
        const auto& in = ctx.getInputType(0)->tensor_type().shape();
        auto* y = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
        *y = in;
        y->add_dim();
        *ctx.getOutputType(1)->mutable_tensor_type()->mutable_shape() = in;
      });
  return s;
}

onnx::OpSchema RegexFullMatch() {
  onnx::OpSchema s("RegexFullMatch", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(20)
      .Attr("pattern", "RE2 regular expression the whole string must match.", onnx::AttributeProto::STRING,
            onnx::OPTIONAL_VALUE)
      .Input(0, "X", "Strings.", "T1")
      .Output(0, "Y", "True where the string matches in full.", "T2")
      .TypeConstraint("T1", {"tensor(string)"}, "Strings.")
      .TypeConstraint("T2", {"tensor(bool)"}, "Results.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
        if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

}  // namespace

void RegisterStringSchemas() {
  Register(StringConcat());
  Register(StringSplit());
  Register(RegexFullMatch());
}

}  // namespace onyx::schemas
