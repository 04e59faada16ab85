// Structural limits a model must stay within before any analysis (checker,
// shape inference, sorting) runs on it, so that a hostile file is refused in
// time linear in its size: no more than kMaxModelNodes nodes over the graph
// and all its subgraphs, and subgraphs nested no deeper than
// kMaxSubgraphDepth. Errors are INVALID_ARGUMENT naming the limit, the count
// found and (for depth) the node that goes too deep.
//
//   RETURN_IF_ERROR(CheckModelLimits(model.graph()));
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace onyx {

// Far above exported networks (a 70B-parameter LLM export has ~20 k nodes);
// low enough that checking and planning such a graph stays within seconds.
inline constexpr int64_t kMaxModelNodes = 500000;
// If/Loop/Scan bodies inside bodies; exporters write a handful of levels.
inline constexpr int kMaxSubgraphDepth = 24;

absl::Status CheckModelLimits(const onnx::GraphProto& graph);

}  // namespace onyx
