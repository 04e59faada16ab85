#include "optimizer/constant_folding.h"

#include "onyx/status_macros.h"

#include <set>

namespace onyx {
namespace {

constexpr int64_t kMaxFoldedBytes = 64 << 20;

bool IsFoldable(const Node& n) {
  static const std::set<std::string> kNever = {"RandomNormal",
                                               "RandomUniform",
                                               "RandomNormalLike",
                                               "RandomUniformLike",
                                               "Multinomial",
                                               "Bernoulli",
                                               "If",
                                               "Loop",
                                               "Scan",
                                               "SequenceMap",
                                               "Dropout",
                                               "QuantizeLinear",
                                               "DynamicQuantizeLinear"};
  return n.domain.empty() && n.subgraphs.empty() && !kNever.count(n.op_type);
}

// A declared main-graph input with an initializer may be overridden at run time.
bool IsConstant(const Graph& graph, const std::string& value) {
  if (value.empty()) return true;
  if (graph.FindInitializer(value) == nullptr) return false;
  if (graph.parent() == nullptr) {
    for (const auto& d : graph.declared_inputs()) {
      if (d == value) return false;
    }
  }
  return true;
}

bool SmallTensors(const std::vector<Value>& values) {
  for (const Value& v : values) {
    if (!v.is_tensor() || static_cast<int64_t>(v.tensor().byte_size()) > kMaxFoldedBytes) return false;
  }
  return true;
}

bool FullyKnownShape(const ValueInfo* info) {
  if (info == nullptr || !info->has_shape || info->kind != ValueInfo::Kind::kTensor) return false;
  for (int64_t d : info->dims) {
    if (d < 0) return false;
  }
  return true;
}

// Shape / Size of a value with a static shape.
bool FoldShapeOf(Graph& graph, Node& n) {
  if (!n.domain.empty() || (n.op_type != "Shape" && n.op_type != "Size") || n.inputs.empty()) return false;
  const ValueInfo* info = graph.FindValueInfo(n.inputs[0]);
  if (!FullyKnownShape(info)) return false;
  Tensor t;
  if (n.op_type == "Size") {
    t = Tensor::Allocate(DataType::kInt64, {});
    *t.mutable_data<int64_t>() = NumElements(info->dims);
  } else {
    const int64_t rank = static_cast<int64_t>(info->dims.size());
    int64_t start = 0, end = rank;
    if (const auto* a = n.FindAttribute("start")) start = a->i();
    if (const auto* a = n.FindAttribute("end")) end = a->i();
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    const int64_t len = std::max<int64_t>(0, end - start);
    t = Tensor::Allocate(DataType::kInt64, {len});
    for (int64_t i = 0; i < len; ++i) t.mutable_data<int64_t>()[i] = info->dims[start + i];
  }
  if (graph.IsOutput(n.outputs[0])) return false;
  graph.SetInitializer(n.outputs[0], t);
  graph.RemoveNode(n.index);
  return true;
}

}  // namespace

absl::StatusOr<bool> ConstantFolding::ApplyImpl(Graph& graph) const {
  bool changed = FoldOnce(graph);
  // Each round reaches one more block of a network whose shapes were hidden
  // behind computed Reshapes; bounded, as ONNX's inference runs each time.
  for (int round = 0; changed && refine_ != nullptr && round < 64; ++round) {
    ASSIGN_OR_RETURN(int refined, refine_(graph));
    if (refined == 0 || !FoldOnce(graph)) break;
  }
  return changed;
}

bool ConstantFolding::FoldOnce(Graph& graph) const {
  bool changed = false;
  for (Node* n : graph.Nodes()) {
    if (FoldShapeOf(graph, *n)) {
      changed = true;
      continue;
    }
    if (!IsFoldable(*n)) continue;
    bool all_constant = true;
    for (const auto& in : n->inputs) all_constant &= IsConstant(graph, in);
    if (!all_constant) continue;
    bool feeds_output = false;
    for (const auto& out : n->outputs) feeds_output |= graph.IsOutput(out);
    if (feeds_output) continue;  // graph outputs keep a producing node
    std::vector<Value> values = evaluate_(graph, *n);
    if (values.empty() || !SmallTensors(values)) continue;
    size_t k = 0;
    for (const auto& out : n->outputs) {
      if (out.empty()) continue;
      graph.SetInitializer(out, values[k++].tensor());
    }
    graph.RemoveNode(n->index);
    changed = true;
  }
  if (changed) {
    // Drop initializers nobody reads any more (main graph inputs stay declared).
    std::set<std::string> used;
    for (const Node* n : graph.Nodes()) {
      for (const auto& i : n->inputs) used.insert(i);
      for (const auto& [attr, sub] : n->subgraphs) {
        for (const auto& v : sub->OuterScopeValues()) used.insert(v);
      }
    }
    for (const auto& o : graph.outputs()) used.insert(o);
    std::vector<std::string> dead;
    for (const auto& [name, t] : graph.initializers()) {
      if (!used.count(name)) dead.push_back(name);
    }
    for (const auto& name : dead) {
      bool declared = false;
      for (const auto& d : graph.declared_inputs()) declared |= (d == name);
      if (!declared) graph.RemoveInitializer(name);
    }
  }
  return changed;
}

}  // namespace onyx
