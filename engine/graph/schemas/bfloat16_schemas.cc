// Opset 22 (ONNX 1.17) added bfloat16 to the float type constraints of the ops
// below and changed nothing else about them. Each gets a version-22 schema
// copied from its newest older one (onnx's own or one of this folder's), with
// tensor(bfloat16) allowed wherever tensor(float) is.
#include <string>
#include <vector>

#include "graph/schemas/schema_families.h"
#include "onnx/defs/schema.h"

namespace onyx::schemas {
namespace {

using onnx::OpSchema;
using onnx::OpSchemaRegistry;

constexpr int kBfloat16Opset = 22;

constexpr const char* kBfloat16Ops[] = {
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "AveragePool",
    "Bernoulli",
    "Conv",
    "ConvTranspose",
    "Cos",
    "Cosh",
    "DeformConv",
    "Dropout",
    "Elu",
    "EyeLike",
    "GRU",
    "GlobalAveragePool",
    "GlobalLpPool",
    "GlobalMaxPool",
    "GridSample",
    "HardSigmoid",
    "HardSwish",
    "InstanceNormalization",
    "LSTM",
    "LpNormalization",
    "LpPool",
    "MaxPool",
    "MaxRoiPool",
    "MaxUnpool",
    "Mish",
    "Multinomial",
    "NegativeLogLikelihoodLoss",
    "RNN",
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "RoiAlign",
    "Round",
    "Selu",
    "Sin",
    "Sinh",
    "Softplus",
    "Softsign",
    "Tan",
    "ThresholdedRelu",
};

bool Contains(const std::vector<std::string>& types, const char* type) {
  for (const std::string& t : types) {
    if (t == type) return true;
  }
  return false;
}

void CopyParameter(const OpSchema::FormalParameter& p, int index, bool input, OpSchema& s) {
  if (input) {
    s.Input(index, p.GetName(), p.GetDescription(), p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(),
            p.GetMinArity(), p.GetDifferentiationCategory());
  } else {
    s.Output(index, p.GetName(), p.GetDescription(), p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(),
             p.GetMinArity(), p.GetDifferentiationCategory());
  }
}

// `old` at `version`, its float type constraints widened to bfloat16.
OpSchema WithBfloat16(const OpSchema& old, int version) {
  OpSchema s(old.Name(), old.file(), old.line());
  s.SetDomain(old.domain()).SinceVersion(version).SetSupportLevel(old.support_level());
  if (old.doc() != nullptr) s.SetDoc(old.doc());
  for (const auto& [name, attribute] : old.attributes()) s.Attr(attribute);
  for (size_t i = 0; i < old.inputs().size(); ++i) CopyParameter(old.inputs()[i], static_cast<int>(i), true, s);
  for (size_t i = 0; i < old.outputs().size(); ++i) CopyParameter(old.outputs()[i], static_cast<int>(i), false, s);
  for (const auto& constraint : old.typeConstraintParams()) {
    std::vector<std::string> types = constraint.allowed_type_strs;
    if (Contains(types, "tensor(float)") && !Contains(types, "tensor(bfloat16)")) types.push_back("tensor(bfloat16)");
    s.TypeConstraint(constraint.type_param_str, std::move(types), constraint.description);
  }
  if (auto infer = old.GetTypeAndShapeInferenceFunction()) s.TypeAndShapeInferenceFunction(infer);
  if (auto propagate = old.GetDataPropagationFunction()) s.PartialDataPropagationFunction(propagate);
  if (old.HasFunction()) {
    const onnx::FunctionProto* body = old.GetFunction();
    s.FunctionBody(std::vector<onnx::NodeProto>(body->node().begin(), body->node().end()),
                   std::vector<onnx::OperatorSetIdProto>(body->opset_import().begin(), body->opset_import().end()));
  }
  return s;
}

}  // namespace

void RegisterBfloat16Schemas() {
  for (const char* name : kBfloat16Ops) {
    const OpSchema* newest = OpSchemaRegistry::Schema(name, kBfloat16Opset, onnx::ONNX_DOMAIN);
    // Ops this folder already defines at 22 (their signature changed too).
    if (newest == nullptr || newest->SinceVersion() >= kBfloat16Opset) continue;
    Register(WithBfloat16(*newest, kBfloat16Opset));
  }
}

}  // namespace onyx::schemas
