// GraphTransformer: one rewriting pass over the IR. Each pass lives in its own
// file and implements the private ApplyImpl() for one graph; the public Apply()
// runs it on every subgraph first, then on the graph, and reports whether
// anything changed.
//
//   EliminateIdentity pass;
//   ASSIGN_OR_RETURN(bool changed, pass.Apply(graph));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "onyx/session_options.h"

namespace onyx {

// Evaluates one node whose inputs are all constant initializers of `graph`,
// returning its outputs in order, or an empty vector when it cannot (no
// kernel, a kernel error). Passes that compute values (constant folding) take
// one, so the optimizer never depends on how nodes are executed.
using NodeEvaluator = std::function<std::vector<Value>(const Graph& graph, const Node& node)>;

// Re-infers the graph's shapes after a rewrite; returns how many values got a
// type or a more static shape (graph/model_loader.h's ReinferShapes).
using ShapeRefiner = std::function<absl::StatusOr<int>(Graph& graph)>;

class GraphTransformer {
 public:
  virtual ~GraphTransformer() = default;
  virtual const char* name() const = 0;
  // Rewrites `graph` (and, recursively, its subgraphs). Returns true if changed.
  absl::StatusOr<bool> Apply(Graph& graph) const;

 private:
  virtual absl::StatusOr<bool> ApplyImpl(Graph& graph) const = 0;
};

// Replaces every node input `from` by `to` in the graph and, recursively, in
// subgraphs that do not declare `from` as an input of their own; a subgraph's
// outputs are renamed too, the main graph's outputs never (they are the
// model's interface).
void ReplaceValueUses(Graph& graph, const std::string& from, const std::string& to);

// Removes `node`, forwarding its only data input to the users of its only output.
// Keeps the output name when it is a graph output (then the producer of the input
// is renamed instead); returns false when neither rewrite is safe.
bool BypassNode(Graph& graph, Node& node);

// The only node reading `value`, or nullptr when it has several readers, none,
// or is a graph output.
Node* SoleConsumer(const Graph& graph, const std::string& value);

// The initializer behind `value` when it is a true constant (not a main-graph
// input that a feed may override), else nullptr.
const Tensor* ConstantValue(const Graph& graph, const std::string& value);

// Sets the `activation` attribute of a fused com.onyx node to "Relu".
void SetReluActivation(Node& fused);
// Sets `activation` to `name` and, when `params` is not empty,
// `activation_params` to them (LeakyRelu: alpha; Clip: min, max;
// HardSigmoid: alpha, beta; Swish: beta).
void SetActivation(Node& fused, const std::string& name, const std::vector<float>& params);

// True for a node of the default ONNX domain with this op type.
inline bool IsOp(const Node* node, const char* op_type) {
  return node != nullptr && node->domain.empty() && node->op_type == op_type;
}

// True for arithmetic of opsets 1-6 with `broadcast` = 1, whose B aligns with
// A at `axis` rather than numpy-style: fusions that assume numpy broadcasting
// leave these nodes alone.
bool HasLegacyBroadcast(const Node& node);

// IsOp for an Add/Sub/Mul/Div (or any op) that broadcasts numpy-style.
inline bool IsNumpyOp(const Node* node, const char* op_type) {
  return IsOp(node, op_type) && !HasLegacyBroadcast(*node);
}

// The passes enabled at `level`, in the order they run; constant folding
// evaluates nodes with `evaluate` and, when `refine` is set, re-infers shapes
// after folding and folds again while that makes more of them static.
std::vector<std::unique_ptr<GraphTransformer>> TransformersForLevel(OptimizationLevel level,
                                                                    const NodeEvaluator& evaluate,
                                                                    const ShapeRefiner& refine = nullptr);

// Runs the passes to a fixed point (bounded number of rounds).
absl::Status OptimizeGraph(Graph& graph, OptimizationLevel level, const NodeEvaluator& evaluate,
                           const ShapeRefiner& refine = nullptr);

}  // namespace onyx
