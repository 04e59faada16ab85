#include "exec/executor.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace onyx {

absl::Status ExecutePlan(ExecutionFrame& frame) {
  const ExecutionPlan& plan = frame.plan();
  const RunOptions& options = frame.run_options();
  for (size_t position = 0; position < plan.nodes.size(); ++position) {
    const NodeRuntime& node = plan.nodes[position];
    frame.set_current_node(static_cast<int>(position));
    if (options.terminate != nullptr && options.terminate->load(std::memory_order_relaxed)) {
      return absl::CancelledError(absl::StrCat("run", options.run_tag.empty() ? "" : " '" + options.run_tag + "'",
                                               " was cancelled before ", node.node->Label()));
    }
    OpKernelContext ctx(frame, node);
    absl::Status status = node.kernel->Compute(ctx);
    if (!status.ok()) {
      std::string label = node.node->Label();
      if (absl::StartsWith(status.message(), label)) return status;
      return absl::Status(status.code(), absl::StrCat(label, ": ", status.message()));
    }
    for (int slot : node.release_after) frame.Release(slot);
  }
  return absl::OkStatus();
}

}  // namespace onyx
