// Preparing a GraphProto as exporters write it for the ONNX checker and the IR:
//
//   RETURN_IF_ERROR(SortNodes(*model.mutable_graph()));   // before the checker
//   PruneCounts pruned = PruneUnused(*model.mutable_graph());
//
// SortNodes puts nodes in topological order (keeping the given order where it
// already is one), in subgraphs too; a node that reads an outer value from a
// subgraph depends on that value's producer. A cycle is refused naming the
// nodes on it. Inputs no node produces are left for the checker to report.
// PruneUnused drops the nodes no graph output depends on, then the
// initializers nothing reads (an initializer that is also a declared graph
// input stays: it is that input's default).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace onyx {

absl::Status SortNodes(onnx::GraphProto& graph);

struct PruneCounts {
  int64_t nodes = 0;
  int64_t initializers = 0;
};
PruneCounts PruneUnused(onnx::GraphProto& graph);

}  // namespace onyx
