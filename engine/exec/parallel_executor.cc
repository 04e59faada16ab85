#include "exec/parallel_executor.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "exec/executor.h"

namespace onyx {
namespace {

struct RunState {
  explicit RunState(const ExecutionPlan& plan)
      : pending(plan.nodes.size()), readers(plan.num_slots()), lanes_left(static_cast<int>(plan.lane_nodes.size())) {
    for (size_t i = 0; i < plan.nodes.size(); ++i) pending[i] = plan.cross_lane_producers[i];
    for (int s = 0; s < plan.num_slots(); ++s) readers[s] = plan.readers[s];
  }
  std::vector<std::atomic<int>> pending;
  std::vector<std::atomic<int>> readers;
  std::atomic<bool> failed{false};
  absl::Mutex mu;
  absl::Status error ABSL_GUARDED_BY(mu);
  int lanes_left ABSL_GUARDED_BY(mu);
};

void RunLane(ExecutionFrame& frame, RunState& st, int lane) {
  const ExecutionPlan& plan = frame.plan();
  for (int pos : plan.lane_nodes[lane]) {
    if (st.pending[pos].load() != 0) {
      struct Wait {
        RunState* st;
        int pos;
        static bool Ready(Wait* w) { return w->st->failed.load() || w->st->pending[w->pos].load() == 0; }
      } wait{&st, pos};
      absl::MutexLock lock(&st.mu);
      st.mu.Await(absl::Condition(&Wait::Ready, &wait));
    }
    if (st.failed.load()) break;
    absl::Status status = ExecuteNode(frame, pos);
    if (!status.ok()) {
      absl::MutexLock lock(&st.mu);
      if (st.error.ok()) st.error = status;
      st.failed = true;
      break;
    }
    const NodeRuntime& node = plan.nodes[pos];
    auto release = [&](int slot) {
      if (slot >= 0 && plan.readers[slot] > 0 && st.readers[slot].fetch_sub(1) == 1) frame.Release(slot);
    };
    std::vector<int> seen;
    for (int s : node.inputs) {
      if (s >= 0 && std::find(seen.begin(), seen.end(), s) == seen.end()) {
        seen.push_back(s);
        release(s);
      }
    }
    for (int s : node.implicit_inputs) {
      if (std::find(seen.begin(), seen.end(), s) == seen.end()) {
        seen.push_back(s);
        release(s);
      }
    }
    if (!plan.cross_lane_consumers[pos].empty()) {
      for (int c : plan.cross_lane_consumers[pos]) st.pending[c].fetch_sub(1);
      absl::MutexLock lock(&st.mu);  // wakes lanes waiting on these barriers
    }
  }
  absl::MutexLock lock(&st.mu);
  --st.lanes_left;
}

}  // namespace

absl::Status ExecutePlanParallel(ExecutionFrame& frame, const std::vector<Stream*>& streams) {
  const ExecutionPlan& plan = frame.plan();
  auto state = std::make_shared<RunState>(plan);
  for (size_t lane = 1; lane < plan.lane_nodes.size(); ++lane) {
    streams[lane]->Submit([&frame, state, lane] { RunLane(frame, *state, static_cast<int>(lane)); });
  }
  RunLane(frame, *state, 0);
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(
      +[](RunState* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu) { return s->lanes_left == 0; }, state.get()));
  return state->error;
}

}  // namespace onyx
