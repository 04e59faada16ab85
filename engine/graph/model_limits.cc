#include "graph/model_limits.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace onyx {

absl::Status CheckModelLimits(const onnx::GraphProto& graph) {
  // Iterative, so that the walk itself needs no stack proportional to depth.
  std::vector<std::pair<const onnx::GraphProto*, int>> pending = {{&graph, 0}};
  int64_t nodes = 0;
  while (!pending.empty()) {
    auto [g, depth] = pending.back();
    pending.pop_back();
    nodes += g->node_size();
    if (nodes > kMaxModelNodes) {
      return absl::InvalidArgumentError(absl::StrCat("the model has more than ", kMaxModelNodes,
                                                     " nodes (graph and subgraphs together), the most onyx loads"));
    }
    for (const onnx::NodeProto& node : g->node()) {
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (!attr.has_g() && attr.graphs_size() == 0) continue;
        if (depth + 1 > kMaxSubgraphDepth) {
          return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "' (", node.op_type(),
                                                         ") nests subgraphs ", depth + 1, " deep, more than the ",
                                                         kMaxSubgraphDepth, " levels onyx loads"));
        }
        if (attr.has_g()) pending.emplace_back(&attr.g(), depth + 1);
        for (const onnx::GraphProto& body : attr.graphs()) pending.emplace_back(&body, depth + 1);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace onyx
