#include "optimizer/fuse_transpose_matmul.h"

#include <algorithm>
#include <numeric>

#include "graph/op_domains.h"

namespace onyx {
namespace {

// The rank of a float value, or -1 when its type is not float or its rank is
// not known.
int64_t FloatRank(const Graph& graph, const std::string& value) {
  const ValueInfo* info = graph.FindValueInfo(value);
  if (info == nullptr || info->kind != ValueInfo::Kind::kTensor || info->type != DataType::kFloat || !info->has_shape) {
    return -1;
  }
  return static_cast<int64_t>(info->dims.size());
}

// True for a permutation of 0..n-1 (a model's perm attribute may be anything).
bool IsPermutation(const std::vector<int64_t>& perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

// A MatMul operand read through the Transposes that produce it: `source`
// seen through `perm` (view axis i is source axis perm[i]; empty: identity).
struct Operand {
  std::string source;
  std::vector<int64_t> perm;
  std::vector<Node*> transposes;
};

Operand Unwind(const Graph& graph, const std::string& value, const Node* reader) {
  Operand op{value, {}, {}};
  while (true) {
    Node* t = graph.Producer(op.source);
    if (!IsOp(t, "Transpose") || SoleConsumer(graph, op.source) != reader) break;
    std::vector<int64_t> p;
    if (const auto* attr = t->FindAttribute("perm")) {
      p.assign(attr->ints().begin(), attr->ints().end());
    } else {  // no perm: the axes reversed
      const int64_t rank = FloatRank(graph, t->inputs[0]);
      if (rank < 0) break;
      for (int64_t i = rank - 1; i >= 0; --i) p.push_back(i);
    }
    if (!IsPermutation(p) || (!op.perm.empty() && p.size() != op.perm.size())) break;
    // T's output axis j is its input's axis p[j], so view axis i, which was
    // T's output axis perm[i], is T's input axis p[perm[i]].
    std::vector<int64_t> composed(p.size());
    for (size_t i = 0; i < p.size(); ++i) composed[i] = p[op.perm.empty() ? i : op.perm[i]];
    op.perm = std::move(composed);
    op.source = t->inputs[0];
    op.transposes.push_back(t);
    reader = t;
  }
  return op;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// True when the permuted view keeps a unit-stride row or column: the source's
// last axis is one of the view's last two.
bool KeepsContiguousMatrix(const std::vector<int64_t>& perm) {
  const size_t r = perm.size();
  return r >= 2 && (perm[r - 1] == static_cast<int64_t>(r - 1) || perm[r - 2] == static_cast<int64_t>(r - 1));
}

void SetInts(Node& node, const char* name, const std::vector<int64_t>& values) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr.add_ints(v);
  node.attributes[name] = std::move(attr);
}

// The float value of a constant scalar (one element, rank <= max_rank).
bool ConstantScalar(const Graph& graph, const std::string& value, int64_t max_rank, float& out) {
  const Tensor* t = ConstantValue(graph, value);
  if (t == nullptr || t->type() != DataType::kFloat || t->num_elements() != 1 || t->rank() > max_rank) return false;
  out = t->data<float>()[0];
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseTransposeMatMul::ApplyImpl(Graph& graph) const {
  bool changed = false;
  for (size_t i = 0; i < graph.NodeCapacity(); ++i) {
    Node* mm = graph.node(i);
    if (mm == nullptr || !IsOp(mm, "MatMul") || mm->inputs.size() != 2) continue;
    if (graph.FindInitializer(mm->inputs[0]) != nullptr || graph.FindInitializer(mm->inputs[1]) != nullptr) continue;
    const int64_t rank_a = FloatRank(graph, mm->inputs[0]), rank_b = FloatRank(graph, mm->inputs[1]);
    if (rank_a < 2 || rank_b < 2) continue;
    Operand a = Unwind(graph, mm->inputs[0], mm), b = Unwind(graph, mm->inputs[1], mm);
    // The composed view must be the operand the MatMul reads (its rank) and
    // keep a unit-stride row or column.
    auto keep = [](const Operand& op, int64_t rank) {
      return static_cast<int64_t>(op.perm.size()) == rank && KeepsContiguousMatrix(op.perm) && !IsIdentity(op.perm);
    };
    if (!a.perm.empty() && !keep(a, rank_a)) a = {mm->inputs[0], {}, {}};
    if (!b.perm.empty() && !keep(b, rank_b)) b = {mm->inputs[1], {}, {}};

    // The product's readers: a constant scalar scale, then a Transpose that
    // keeps the last axis last.
    const int64_t rank_y = std::max(rank_a, rank_b);
    std::vector<Node*> consumed;
    std::string result = mm->outputs[0];
    float alpha = 1.f;
    Node* next = SoleConsumer(graph, result);
    float scalar = 0.f;
    if ((IsNumpyOp(next, "Mul") || (IsNumpyOp(next, "Div") && next->inputs[0] == result)) &&
        ConstantScalar(graph, next->inputs[0] == result ? next->inputs[1] : next->inputs[0], rank_y, scalar) &&
        (next->op_type == "Mul" || scalar != 0.f)) {
      alpha = next->op_type == "Mul" ? scalar : 1.f / scalar;
      consumed.push_back(next);
      result = next->outputs[0];
      next = SoleConsumer(graph, result);
    }
    std::vector<int64_t> perm_y;
    if (IsOp(next, "Transpose")) {
      const auto* attr = next->FindAttribute("perm");
      std::vector<int64_t> p;
      if (attr != nullptr) p.assign(attr->ints().begin(), attr->ints().end());
      if (static_cast<int64_t>(p.size()) == rank_y && IsPermutation(p) && p[rank_y - 1] == rank_y - 1) {
        perm_y = std::move(p);
        consumed.push_back(next);
        result = next->outputs[0];
      }
    }
    if (a.transposes.empty() && b.transposes.empty() && consumed.empty()) continue;

    auto fused = std::make_unique<Node>();
    fused->name = mm->name.empty() ? graph.UniqueValueName("TransposedMatMul") : mm->name;
    fused->op_type = "TransposedMatMul";
    fused->domain = kOnyxDomain;
    fused->inputs = {a.source, b.source};
    fused->outputs = {result};
    if (!a.perm.empty()) SetInts(*fused, "perm_a", a.perm);
    if (!b.perm.empty()) SetInts(*fused, "perm_b", b.perm);
    if (!perm_y.empty()) SetInts(*fused, "perm_y", perm_y);
    if (alpha != 1.f) {
      onnx::AttributeProto attr;
      attr.set_name("alpha");
      attr.set_type(onnx::AttributeProto::FLOAT);
      attr.set_f(alpha);
      fused->attributes["alpha"] = std::move(attr);
    }
    for (Node* n : consumed) graph.RemoveNode(n->index);
    for (Node* n : a.transposes) graph.RemoveNode(n->index);
    for (Node* n : b.transposes) graph.RemoveNode(n->index);
    graph.RemoveNode(mm->index);
    graph.AddNode(std::move(fused));
    changed = true;
  }
  return changed;
}

}  // namespace onyx
