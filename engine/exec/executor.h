// Runs an ExecutionPlan over a frame: nodes in plan order, the terminate flag
// checked between nodes, values released after their last reader.
#pragma once

#include "absl/status/status.h"
#include "exec/execution_frame.h"

namespace onyx {

// Errors from a kernel come back prefixed with the node's label; CANCELLED when
// RunOptions::terminate is set.
absl::Status ExecutePlan(ExecutionFrame& frame);

// Runs the node at `position` of the frame's plan: the terminate check, the
// kernel, its latency statistics and profile event. Errors carry the node's label.
absl::Status ExecuteNode(ExecutionFrame& frame, size_t position);

}  // namespace onyx
