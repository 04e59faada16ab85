// GraphTransformer: one rewriting pass over the IR. Each pass lives in its own
// file and implements the private ApplyImpl() for one graph; the public Apply()
// runs it on every subgraph first, then on the graph, and reports whether
// anything changed.
//
//   EliminateIdentity pass;
//   ASSIGN_OR_RETURN(bool changed, pass.Apply(graph));
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "onyx/session.h"

namespace onyx {

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

// The passes enabled at `level`, in the order they run.
std::vector<std::unique_ptr<GraphTransformer>> TransformersForLevel(OptimizationLevel level);

// Runs the passes to a fixed point (bounded number of rounds).
absl::Status OptimizeGraph(Graph& graph, OptimizationLevel level);

}  // namespace onyx
