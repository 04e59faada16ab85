// ai.onnx.ml opsets 4-5 (ONNX 1.14-1.16), which onnx 1.12 does not know:
// LabelEncoder-4 (tensor-valued keys, values and default), TreeEnsemble-5, and
// the version-5 markers that deprecate TreeEnsembleClassifier/Regressor, so a
// model importing ml opset 5 that still uses them fails the checker as it does
// in ONNX Runtime.
#include "graph/schemas/newer_opsets.h"
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

constexpr char kMlDomain[] = "ai.onnx.ml";

// The registry refuses versions outside a domain's range (see
// RaiseDefaultDomainRange in newer_opsets.cc for why this is done in place).
void RaiseMlDomainRange() {
  auto& ranges = const_cast<std::unordered_map<std::string, std::pair<int, int>>&>(
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map());
  auto& ml_range = ranges[kMlDomain];
  if (ml_range.second < kMaxOnnxMlOpset) ml_range.second = kMaxOnnxMlOpset;
}

// Element type and length of the first of `names` the node sets (a list
// attribute or a 1-D tensor attribute); UNDEFINED when none is set.
std::pair<int32_t, int64_t> ListAttrTypeAndLength(onnx::InferenceContext& ctx,
                                                  std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    if (a == nullptr) continue;
    if (a->has_t()) {
      int64_t n = 1;
      for (int64_t d : a->t().dims()) n *= d;
      return {a->t().data_type(), n};
    }
    if (a->strings_size() > 0 || a->type() == onnx::AttributeProto::STRINGS) {
      return {onnx::TensorProto::STRING, a->strings_size()};
    }
    if (a->ints_size() > 0 || a->type() == onnx::AttributeProto::INTS)
      return {onnx::TensorProto::INT64, a->ints_size()};
    if (a->floats_size() > 0 || a->type() == onnx::AttributeProto::FLOATS) {
      return {onnx::TensorProto::FLOAT, a->floats_size()};
    }
  }
  return {onnx::TensorProto::UNDEFINED, 0};
}

void InferLabelEncoder4(onnx::InferenceContext& ctx) {
  auto [key_type, key_count] =
      ListAttrTypeAndLength(ctx, {"keys_tensor", "keys_strings", "keys_int64s", "keys_floats"});
  if (key_type == onnx::TensorProto::UNDEFINED) {
    fail_shape_inference("one of keys_tensor, keys_strings, keys_int64s, keys_floats must be set");
  }
  const onnx::TypeProto* in = ctx.getInputType(0);
  if (in != nullptr && in->tensor_type().elem_type() != onnx::TensorProto::UNDEFINED &&
      in->tensor_type().elem_type() != key_type) {
    fail_shape_inference("the input type (", in->tensor_type().elem_type(), ") differs from the key type (", key_type,
                         ")");
  }
  auto [value_type, value_count] =
      ListAttrTypeAndLength(ctx, {"values_tensor", "values_strings", "values_int64s", "values_floats"});
  if (value_type == onnx::TensorProto::UNDEFINED) {
    fail_shape_inference("one of values_tensor, values_strings, values_int64s, values_floats must be set");
  }
  if (value_count != key_count) {
    fail_shape_inference(key_count, " keys but ", value_count, " values");
  }
  const onnx::AttributeProto* def = ctx.getAttribute("default_tensor");
  if (def != nullptr && def->has_t() && def->t().data_type() != onnx::TensorProto::UNDEFINED) {
    if (def->t().data_type() != value_type) {
      fail_shape_inference("default_tensor's type (", def->t().data_type(), ") differs from the value type (",
                           value_type, ")");
    }
    if (def->t().dims_size() != 1 || def->t().dims(0) != 1) {
      fail_shape_inference("default_tensor must be a 1-D tensor of one element");
    }
  }
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(value_type);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

onnx::OpSchema LabelEncoder4() {
  const std::vector<std::string> types = {"tensor(string)", "tensor(int64)", "tensor(float)",
                                          "tensor(int32)",  "tensor(int16)", "tensor(double)"};
  onnx::OpSchema s("LabelEncoder", __FILE__, __LINE__);
  s.SetDomain(kMlDomain)
      .SinceVersion(4)
      .Attr("default_float", "Output for a float key not found.", onnx::AttributeProto::FLOAT, -0.0f)
      .Attr("default_int64", "Output for an int64 key not found.", onnx::AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("default_string", "Output for a string key not found.", onnx::AttributeProto::STRING,
            std::string("_Unused"))
      .Attr("default_tensor", "Output for a key not found, as a 1-element tensor.", onnx::AttributeProto::TENSOR,
            onnx::OPTIONAL_VALUE)
      .Attr("keys_floats", "Float keys.", onnx::AttributeProto::FLOATS, onnx::OPTIONAL_VALUE)
      .Attr("keys_int64s", "Int64 keys.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("keys_strings", "String keys.", onnx::AttributeProto::STRINGS, onnx::OPTIONAL_VALUE)
      .Attr("keys_tensor", "Keys as a 1-D tensor.", onnx::AttributeProto::TENSOR, onnx::OPTIONAL_VALUE)
      .Attr("values_floats", "Float values.", onnx::AttributeProto::FLOATS, onnx::OPTIONAL_VALUE)
      .Attr("values_int64s", "Int64 values.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("values_strings", "String values.", onnx::AttributeProto::STRINGS, onnx::OPTIONAL_VALUE)
      .Attr("values_tensor", "Values as a 1-D tensor.", onnx::AttributeProto::TENSOR, onnx::OPTIONAL_VALUE)
      .Input(0, "X", "Input data; its type is the key type.", "T1")
      .Output(0, "Y", "Output data; its type is the value type.", "T2")
      .TypeConstraint("T1", types, "Key types.")
      .TypeConstraint("T2", types, "Value types.")
      .TypeAndShapeInferenceFunction(InferLabelEncoder4);
  return s;
}

void InferTreeEnsemble5(onnx::InferenceContext& ctx) {
  const onnx::TypeProto* in = ctx.getInputType(0);
  if (in == nullptr) return;
  const int32_t type = in->tensor_type().elem_type();
  for (const char* name : {"nodes_splits", "leaf_weights", "membership_values"}) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    if (a != nullptr && a->has_t() && a->t().data_type() != type) {
      fail_shape_inference("attribute '", name, "' has element type ", a->t().data_type(), ", the input ", type);
    }
  }
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(type);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& shape = in->tensor_type().shape();
  if (shape.dim_size() != 2) fail_shape_inference("input must be 2-D, received rank ", shape.dim_size());
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  *out->add_dim() = shape.dim(0);
  auto* targets = out->add_dim();
  if (const onnx::AttributeProto* n = ctx.getAttribute("n_targets")) targets->set_dim_value(n->i());
}

onnx::OpSchema TreeEnsemble5() {
  using A = onnx::AttributeProto;
  onnx::OpSchema s("TreeEnsemble", __FILE__, __LINE__);
  s.SetDomain(kMlDomain)
      .SinceVersion(5)
      .Attr("aggregate_function", "0 AVERAGE, 1 SUM, 2 MIN, 3 MAX.", A::INT, static_cast<int64_t>(1))
      .Attr("leaf_targetids", "Target index of each leaf.", A::INTS)
      .Attr("leaf_weights", "Weight of each leaf (input type).", A::TENSOR)
      .Attr("membership_values", "BRANCH_MEMBER sets, NaN-separated.", A::TENSOR, onnx::OPTIONAL_VALUE)
      .Attr("n_targets", "Number of targets.", A::INT, onnx::OPTIONAL_VALUE)
      .Attr("nodes_falseleafs", "1 when the false branch is a leaf.", A::INTS)
      .Attr("nodes_falsenodeids", "False branch: node or leaf index.", A::INTS)
      .Attr("nodes_featureids", "Feature each node tests.", A::INTS)
      .Attr("nodes_hitrates", "Unused for inference.", A::TENSOR, onnx::OPTIONAL_VALUE)
      .Attr("nodes_missing_value_tracks_true", "1 when NaN takes the true branch.", A::INTS, onnx::OPTIONAL_VALUE)
      .Attr("nodes_modes", "uint8 modes: 0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER.", A::TENSOR)
      .Attr("nodes_splits", "Threshold of each node (input type).", A::TENSOR)
      .Attr("nodes_trueleafs", "1 when the true branch is a leaf.", A::INTS)
      .Attr("nodes_truenodeids", "True branch: node or leaf index.", A::INTS)
      .Attr("post_transform", "0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT.", A::INT,
            static_cast<int64_t>(0))
      .Attr("tree_roots", "Node index of each tree's root.", A::INTS)
      .Input(0, "X", "Input of shape [N, F].", "T")
      .Output(0, "Y", "Output of shape [N, n_targets].", "T")
      .TypeConstraint("T", {"tensor(float)", "tensor(double)", "tensor(float16)"}, "Input and output type.")
      .TypeAndShapeInferenceFunction(InferTreeEnsemble5);
  return s;
}

onnx::OpSchema Deprecated(const char* name, int version) {
  onnx::OpSchema s(name, __FILE__, __LINE__);
  s.SetDomain(kMlDomain).SinceVersion(version).Deprecate();
  return s;
}

}  // namespace

void RegisterMlSchemas() {
  RaiseMlDomainRange();
  Register(LabelEncoder4());
  Register(TreeEnsemble5());
  Register(Deprecated("TreeEnsembleClassifier", 5));
  Register(Deprecated("TreeEnsembleRegressor", 5));
}

}  // namespace onyx::schemas
