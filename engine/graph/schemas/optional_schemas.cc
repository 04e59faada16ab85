// OptionalHasElement-18 and OptionalGetElement-18 also accept plain tensors
// and sequences (an element that is always there), and OptionalHasElement's
// input becomes optional (absent: false). The kernels of version 15 already
// read any value, so only the signatures change.
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

std::vector<std::string> OptionalOrPlainTypes() {
  std::vector<std::string> t = onnx::OpSchema::all_optional_types();
  for (const auto* list : {&onnx::OpSchema::all_tensor_types(), &onnx::OpSchema::all_tensor_sequence_types()}) {
    t.insert(t.end(), list->begin(), list->end());
  }
  return t;
}

std::vector<std::string> PlainTypes() {
  std::vector<std::string> t = onnx::OpSchema::all_tensor_types();
  const auto& seq = onnx::OpSchema::all_tensor_sequence_types();
  t.insert(t.end(), seq.begin(), seq.end());
  return t;
}

onnx::OpSchema OptionalHasElement() {
  onnx::OpSchema s("OptionalHasElement", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(18)
      .Input(0, "input", "An optional, a tensor or a sequence; may be omitted.", "O", onnx::OpSchema::Optional)
      .Output(0, "output", "Scalar: false for an omitted input or an empty optional, else true.", "B")
      .TypeConstraint("O", OptionalOrPlainTypes(), "Optional, tensor and sequence types.")
      .TypeConstraint("B", {"tensor(bool)"}, "Result type.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
        ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape()->Clear();
      });
  return s;
}

onnx::OpSchema OptionalGetElement() {
  onnx::OpSchema s("OptionalGetElement", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(18)
      .Input(0, "input", "An optional with an element, a tensor or a sequence.", "O")
      .Output(0, "output", "The optional's element, or the input itself.", "V")
      .TypeConstraint("O", OptionalOrPlainTypes(), "Optional, tensor and sequence types.")
      .TypeConstraint("V", PlainTypes(), "Tensor and sequence types.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        const onnx::TypeProto* in = ctx.getInputType(0);
        if (in == nullptr) return;
        *ctx.getOutputType(0) = in->has_optional_type() ? in->optional_type().elem_type() : *in;
      });
  return s;
}

}  // namespace

void RegisterOptionalSchemas() {
  Register(OptionalHasElement());
  Register(OptionalGetElement());
}

}  // namespace onyx::schemas
