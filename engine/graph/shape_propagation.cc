#include "graph/shape_propagation.h"

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/tensor_proto.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace onyx {
namespace {

// Small constants (shapes, axes, starts and ends) are what inference reads
// values of; a weight's shape is all it needs of the weight.
constexpr int64_t kShapeConstantBytes = 4096;

bool IsStatic(const ValueInfo& info) {
  if (info.kind != ValueInfo::Kind::kTensor || info.type == DataType::kUndefined || !info.has_shape) return false;
  for (int64_t d : info.dims) {
    if (d < 0) return false;
  }
  return true;
}

}  // namespace

bool RefinesShape(const ValueInfo& known, const ValueInfo& inferred) {
  if (known.kind != ValueInfo::Kind::kTensor || inferred.kind != known.kind || inferred.type != known.type ||
      !inferred.has_shape) {
    return false;
  }
  if (!known.has_shape) return true;
  if (known.dims.size() != inferred.dims.size()) return false;
  bool more = false;
  for (size_t i = 0; i < known.dims.size(); ++i) {
    if (known.dims[i] >= 0) {
      if (inferred.dims[i] != known.dims[i]) return false;
    } else if (inferred.dims[i] >= 0) {
      more = true;
    }
  }
  return more;
}

bool PropagatesInProcess(const std::string& op_type) {
  // The layers between an exporter's computed Reshapes in CNNs and
  // transformers, and the shape arithmetic itself.
  static const std::set<std::string> kOps = {"Add",
                                             "AveragePool",
                                             "BatchNormalization",
                                             "Cast",
                                             "Clip",
                                             "Concat",
                                             "Conv",
                                             "Div",
                                             "Erf",
                                             "Flatten",
                                             "Gather",
                                             "Gemm",
                                             "GlobalAveragePool",
                                             "GlobalMaxPool",
                                             "HardSigmoid",
                                             "HardSwish",
                                             "Identity",
                                             "LayerNormalization",
                                             "LeakyRelu",
                                             "MatMul",
                                             "MaxPool",
                                             "Mul",
                                             "Pow",
                                             "ReduceMean",
                                             "Relu",
                                             "Reshape",
                                             "Shape",
                                             "Sigmoid",
                                             "Slice",
                                             "Softmax",
                                             "Split",
                                             "Sqrt",
                                             "Squeeze",
                                             "Sub",
                                             "Tanh",
                                             "Transpose",
                                             "Unsqueeze"};
  return kOps.count(op_type) > 0;
}

int PropagateStaticShapes(Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return 0;
  const int64_t opset = graph.OpsetFor("");
  if (opset <= 0) return 0;
  int changed = 0;
  for (const Node* n : *order) {
    if (!n->domain.empty() || !n->subgraphs.empty() || !PropagatesInProcess(n->op_type)) continue;
    bool pending = false;
    for (const auto& out : n->outputs) {
      const ValueInfo* info = out.empty() ? nullptr : graph.FindValueInfo(out);
      pending |= !out.empty() && (info == nullptr || !IsStatic(*info));
    }
    if (!pending) continue;
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n->op_type, static_cast<int>(opset), "");
    if (schema == nullptr || !schema->has_type_and_shape_inference_function()) continue;

    std::vector<onnx::TypeProto> types(n->inputs.size());
    std::vector<onnx::TensorProto> constants;
    constants.reserve(n->inputs.size());
    std::unordered_map<std::string, onnx::TypeProto*> types_by_name;
    std::unordered_map<std::string, const onnx::TensorProto*> data_by_name;
    bool ready = true;
    for (size_t i = 0; i < n->inputs.size() && ready; ++i) {
      const std::string& in = n->inputs[i];
      if (in.empty()) continue;
      const ValueInfo* info = graph.FindValueInfo(in);
      const Tensor* constant = graph.FindInitializer(in);
      ValueInfo of_constant;
      if (constant != nullptr && (info == nullptr || !IsStatic(*info))) {
        of_constant.name = in;
        of_constant.type = constant->type();
        of_constant.has_shape = true;
        of_constant.dims.assign(constant->dims().begin(), constant->dims().end());
        info = &of_constant;
      }
      if (info == nullptr || !IsStatic(*info)) {
        ready = false;
        break;
      }
      ValueInfoToTypeProto(*info, &types[i]);
      types_by_name[in] = &types[i];
      if (constant != nullptr && static_cast<int64_t>(constant->byte_size()) <= kShapeConstantBytes) {
        constants.push_back(TensorToProto(*constant, in));
        data_by_name[in] = &constants.back();
      }
    }
    if (!ready) continue;

    onnx::NodeProto proto;
    proto.set_op_type(n->op_type);
    for (const auto& in : n->inputs) proto.add_input(in);
    for (const auto& out : n->outputs) proto.add_output(out);
    for (const auto& [name, attr] : n->attributes) *proto.add_attribute() = attr;
    onnx::shape_inference::InferenceContextImpl context(proto, types_by_name, data_by_name, {});
    try {
      schema->GetTypeAndShapeInferenceFunction()(context);
    } catch (const std::exception&) {
      continue;  // rejected: the kernel reports the mismatch at run time
    }
    for (size_t k = 0; k < n->outputs.size(); ++k) {
      const std::string& out = n->outputs[k];
      const onnx::TypeProto* type = context.getOutputType(k);
      if (out.empty() || type == nullptr || !type->has_tensor_type()) continue;
      ValueInfo inferred = ValueInfoFromTypeProto(out, *type);
      const ValueInfo* known = graph.FindValueInfo(out);
      if (known != nullptr && known->type != DataType::kUndefined) {
        if (!RefinesShape(*known, inferred)) continue;
      } else if (!inferred.has_shape) {
        continue;
      }
      graph.SetValueInfo(out, std::move(inferred));
      ++changed;
    }
  }
  return changed;
}

}  // namespace onyx
