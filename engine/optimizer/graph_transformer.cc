#include "optimizer/graph_transformer.h"

#include "onyx/status_macros.h"
#include "optimizer/constant_folding.h"
#include "optimizer/eliminate_dropout.h"
#include "optimizer/eliminate_identity.h"
#include "optimizer/eliminate_noop_cast.h"
#include "optimizer/eliminate_noop_pad.h"
#include "optimizer/eliminate_transpose_pair.h"
#include "optimizer/fold_reshape_chain.h"
#include "optimizer/fuse_conv_activation.h"
#include "optimizer/fuse_conv_batchnorm.h"
#include "optimizer/fuse_gelu.h"
#include "optimizer/fuse_gemm_activation.h"
#include "optimizer/fuse_layer_norm.h"
#include "optimizer/fuse_matmul_add.h"
#include "optimizer/fuse_matmul_integer_to_float.h"
#include "optimizer/fuse_qdq_conv.h"
#include "optimizer/fuse_qdq_matmul.h"

namespace onyx {

absl::StatusOr<bool> GraphTransformer::Apply(Graph& graph) const {
  bool changed = false;
  for (Node* n : graph.Nodes()) {
    for (auto& [attr, sub] : n->subgraphs) {
      ASSIGN_OR_RETURN(bool sub_changed, Apply(*sub));
      changed |= sub_changed;
    }
  }
  ASSIGN_OR_RETURN(bool self_changed, ApplyImpl(graph));
  return changed || self_changed;
}

void ReplaceValueUses(Graph& graph, const std::string& from, const std::string& to) {
  for (Node* n : graph.Nodes()) {
    for (auto& in : n->inputs) {
      if (in == from) in = to;
    }
    for (auto& [attr, sub] : n->subgraphs) {
      // Subgraphs see outer values by name unless they define the name themselves.
      bool shadowed = false;
      for (const auto& i : sub->declared_inputs()) shadowed |= (i == from);
      if (!shadowed) ReplaceValueUses(*sub, from, to);
    }
  }
  for (auto& out : graph.mutable_outputs()) {
    if (out == from && graph.parent() != nullptr) out = to;
  }
}

bool BypassNode(Graph& graph, Node& node) {
  if (node.inputs.empty() || node.outputs.empty() || node.inputs[0].empty()) return false;
  const std::string input = node.inputs[0];
  const std::string output = node.outputs[0];
  if (!graph.IsOutput(output)) {
    ReplaceValueUses(graph, output, input);
    graph.RemoveNode(node.index);
    return true;
  }
  // The output name must survive: rename the producer's output instead, if the
  // input is a plain intermediate of this graph read by nobody else.
  Node* producer = graph.Producer(input);
  if (producer == nullptr || graph.IsOutput(input) || graph.Consumers(input).size() != 1) return false;
  for (auto& o : producer->outputs) {
    if (o == input) o = output;
  }
  graph.RemoveNode(node.index);
  return true;
}

Node* SoleConsumer(const Graph& graph, const std::string& value) {
  if (value.empty() || graph.IsOutput(value)) return nullptr;
  std::vector<Node*> consumers = graph.Consumers(value);
  if (consumers.size() != 1) return nullptr;
  int uses = 0;
  for (const auto& in : consumers[0]->inputs) uses += (in == value);
  return uses == 1 ? consumers[0] : nullptr;
}

bool HasLegacyBroadcast(const Node& node) {
  if (node.since_version <= 0 || node.since_version >= 7) return false;
  const onnx::AttributeProto* broadcast = node.FindAttribute("broadcast");
  return broadcast != nullptr && broadcast->i() != 0;
}

void SetReluActivation(Node& fused) { SetActivation(fused, "Relu", {}); }

void SetActivation(Node& fused, const std::string& name, const std::vector<float>& params) {
  onnx::AttributeProto activation;
  activation.set_name("activation");
  activation.set_type(onnx::AttributeProto::STRING);
  activation.set_s(name);
  fused.attributes["activation"] = std::move(activation);
  if (params.empty()) return;
  onnx::AttributeProto values;
  values.set_name("activation_params");
  values.set_type(onnx::AttributeProto::FLOATS);
  for (float p : params) values.add_floats(p);
  fused.attributes["activation_params"] = std::move(values);
}

const Tensor* ConstantValue(const Graph& graph, const std::string& value) {
  const Tensor* t = graph.FindInitializer(value);
  if (t == nullptr || graph.parent() != nullptr) return t;
  for (const auto& d : graph.declared_inputs()) {
    if (d == value) return nullptr;
  }
  return t;
}

std::vector<std::unique_ptr<GraphTransformer>> TransformersForLevel(OptimizationLevel level,
                                                                    const NodeEvaluator& evaluate,
                                                                    const ShapeRefiner& refine) {
  std::vector<std::unique_ptr<GraphTransformer>> passes;
  if (level == OptimizationLevel::kDisabled) return passes;
  // Before constant folding turns the weights' DequantizeLinear into floats.
  if (level != OptimizationLevel::kBasic) {
    passes.push_back(std::make_unique<FuseQdqConv>());
    passes.push_back(std::make_unique<FuseQdqMatMul>());
  }
  passes.push_back(std::make_unique<EliminateIdentity>());
  passes.push_back(std::make_unique<EliminateDropout>());
  passes.push_back(std::make_unique<ConstantFolding>(evaluate, refine));
  passes.push_back(std::make_unique<EliminateTransposePair>());
  passes.push_back(std::make_unique<EliminateNoopCast>());
  passes.push_back(std::make_unique<EliminateNoopPad>());
  passes.push_back(std::make_unique<FoldReshapeChain>());
  if (level == OptimizationLevel::kBasic) return passes;
  // Extended: fusions into com.onyx operators (CPU kernels in providers/cpu/fused).
  passes.push_back(std::make_unique<FuseConvBatchNorm>());
  passes.push_back(std::make_unique<FuseConvActivation>());
  passes.push_back(std::make_unique<FuseMatMulAdd>());
  passes.push_back(std::make_unique<FuseMatMulIntegerToFloat>());
  passes.push_back(std::make_unique<FuseGemmActivation>());
  passes.push_back(std::make_unique<FuseGelu>());
  passes.push_back(std::make_unique<FuseLayerNorm>());
  return passes;
}

absl::Status OptimizeGraph(Graph& graph, OptimizationLevel level, const NodeEvaluator& evaluate,
                           const ShapeRefiner& refine) {
  auto passes = TransformersForLevel(level, evaluate, refine);
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (const auto& pass : passes) {
      ASSIGN_OR_RETURN(bool c, pass->Apply(graph));
      changed |= c;
    }
    if (!changed) break;
  }
  return absl::OkStatus();
}

}  // namespace onyx
