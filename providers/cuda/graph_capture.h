// CUDA-graph capture of a session's CUDA lane: which partitioned graphs can be
// captured (PlanGraphCapture, a pure function of the graph), and a controller
// that captures the lane's per-run work once it is warm and then replays it.
//
//   ASSIGN_OR_RETURN(CapturePlan plan, PlanGraphCapture(graph, "cuda"));   // at session creation
//   CaptureController capture(runtime, {.warmup_runs = 2});
//   // each run, on the lane thread: plan.uploads as usual, then
//   RETURN_IF_ERROR(capture.Run(lane->stream(), [&] { return RunNodes(plan.body); }));
//   // then plan.downloads as usual
//
// What is captured is the lane's body: its nodes other than the boundary
// copies. The uploads (MemcpyFromHost) run before it and the downloads
// (MemcpyToHost) after it, outside the graph, because they stage through
// pinned buffers that change from run to run and must wait on the host.
// Host-side work between two CUDA nodes cannot be replayed by the device, so
// a graph with any host node in the middle of the lane is refused; host
// nodes before the lane's first CUDA node or after its last are fine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "providers/cuda/device_runtime.h"

namespace onyx {

// A capturable graph's nodes (indices), each list in topological order.
struct CapturePlan {
  std::vector<size_t> uploads;    // com.onyx MemcpyFromHost on the provider
  std::vector<size_t> body;       // the provider's other nodes: what is captured
  std::vector<size_t> downloads;  // com.onyx MemcpyToHost on the provider
};

// The plan, or FAILED_PRECONDITION "CUDA graph capture refused: <reason>",
// the reason naming a node or value, for the first of these checks to fail:
//  1. no node of the graph is on `provider`;
//  2. a control-flow node (If, Loop, Scan, or any node with a subgraph);
//  3. a node outside the body (another provider's, or a boundary copy) that
//     both depends on a body node and feeds one: it would run between them;
//  4. a value the lane's nodes read or write (initializers aside) with no
//     inferred shape, an unknown dimension, or not a tensor.
// Errors of Graph::TopologicalOrder are returned as they are.
absl::StatusOr<CapturePlan> PlanGraphCapture(const Graph& graph, const std::string& provider = "cuda");

// Captures and replays one lane's body. Thread-compatible: one per lane,
// called on the lane's thread (capture is thread-local: see DeviceRuntime).
//
// Run(stream, enqueue): the first `warmup_runs` calls run `enqueue` directly,
// which lets the arena reach its steady state and libraries pick algorithms
// and allocate what they need. The next call captures: BeginCapture on
// `stream`, `enqueue` (recorded, not run), EndCapture, instantiate, then
// launches the graph to do this run's work. Later calls only launch.
// If the capture fails (enqueue returns an error, e.g. an allocation or a
// synchronisation inside the captured region, or the runtime refuses), the
// capture is ended and discarded, `enqueue` runs directly for this run, and
// the controller stays eager from then on (state kDisabled, with the reason).
//
// Replays are only right if every device address the body uses is the same
// as at capture (uploads into the same buffers, intermediates and outputs in
// memory kept for the graph's lifetime) and the shapes do not change: the
// caller guarantees both, and calls Reset() when they would not hold.
class CaptureController {
 public:
  struct Options {
    int warmup_runs = 2;
  };
  enum class State { kWarmingUp, kReplaying, kDisabled };

  CaptureController(std::shared_ptr<DeviceRuntime> runtime, Options options);
  ~CaptureController();
  CaptureController(const CaptureController&) = delete;
  CaptureController& operator=(const CaptureController&) = delete;

  // See the class comment. Returns enqueue's error, or a runtime error of a
  // launch; a failed capture is not an error when the direct run succeeds.
  absl::Status Run(StreamHandle stream, const std::function<absl::Status()>& enqueue);
  // Destroys the graph and starts warming up again (also after kDisabled).
  void Reset();

  State state() const { return state_; }
  // Why capture was given up ("" unless kDisabled).
  const std::string& disabled_reason() const { return disabled_reason_; }
  int64_t replays() const { return replays_; }

 private:
  absl::Status Capture(StreamHandle stream, const std::function<absl::Status()>& enqueue);
  void DestroyGraph();

  const std::shared_ptr<DeviceRuntime> runtime_;
  const Options options_;
  State state_ = State::kWarmingUp;
  int warm_runs_ = 0;
  int64_t replays_ = 0;
  std::string disabled_reason_;
  GraphHandle graph_ = nullptr;
  GraphExecHandle exec_ = nullptr;
};

}  // namespace onyx
