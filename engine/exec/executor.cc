#include "exec/executor.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/parallel_for.h"
#include "exec/frame_kernel_context.h"
#include "exec/profiler.h"

#include <chrono>
#include <exception>
#include <new>

namespace onyx {
namespace {

// A kernel that throws (std::bad_alloc from a temporary sized by its input,
// a library's exception) fails the run with a status, which ExecuteNode
// prefixes with the node, instead of unwinding through the executor into the
// caller's thread (a server worker) with the run half done.
absl::Status ComputeCatching(const OpKernel& kernel, OpKernelContext& ctx) {
  try {
    return kernel.Compute(ctx);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("the kernel ran out of memory");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the kernel threw: ", e.what()));
  } catch (...) {
    return absl::InternalError("the kernel threw an exception of unknown type");
  }
}

}  // namespace

absl::Status ExecuteNode(ExecutionFrame& frame, size_t position) {
  const ExecutionPlan& plan = frame.plan();
  const RunOptions& options = frame.run_options();
  const NodeRuntime& node = plan.nodes[position];
  if (options.terminate != nullptr && options.terminate->load(std::memory_order_relaxed)) {
    return absl::CancelledError(absl::StrCat("run", options.run_tag.empty() ? "" : " '" + options.run_tag + "'",
                                             " was cancelled before ", node.node->Label()));
  }
  FrameKernelContext ctx(frame, node);
  ScopedIntraOpThreads threads(plan.intra_op_threads);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = ComputeCatching(*node.kernel, ctx);
  const int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  node.stats->Record(ns);
  if (Profiler* profiler = frame.profiler()) {
    ProfileEvent event;
    event.name = node.node->Label();
    event.op_type = node.node->op_type;
    event.provider = node.provider;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const Value* v = node.inputs[i] >= 0 ? &frame.value(node.inputs[i]) : nullptr;
      if (i) event.shapes += ",";
      if (v != nullptr && v->is_tensor()) event.shapes += DimsToString(v->tensor().dims());
    }
    event.duration_us = ns / 1000;
    event.start_us = profiler->NowMicros() - event.duration_us;
    profiler->Record(std::move(event));
  }
  RunLog(options.log_level, spdlog::level::trace, "run '{}': {} on {} took {} us", options.run_tag, node.node->Label(),
         node.provider, ns / 1000);
  if (!status.ok()) {
    RunLog(options.log_level, spdlog::level::debug, "run '{}': {} failed: {}", options.run_tag, node.node->Label(),
           std::string(status.message()));
    std::string label = node.node->Label();
    if (absl::StartsWith(status.message(), label)) return status;
    return absl::Status(status.code(), absl::StrCat(label, ": ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status ExecutePlan(ExecutionFrame& frame) {
  const ExecutionPlan& plan = frame.plan();
  for (size_t position = 0; position < plan.nodes.size(); ++position) {
    frame.set_current_node(static_cast<int>(position));
    absl::Status status = ExecuteNode(frame, position);
    if (!status.ok()) return status;
    for (int slot : plan.nodes[position].release_after) frame.Release(slot);
  }
  return absl::OkStatus();
}

}  // namespace onyx
