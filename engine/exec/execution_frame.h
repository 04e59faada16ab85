// ExecutionFrame: the values of one run of an ExecutionPlan. Binds feeds and
// constants to their slots, allocates kernel outputs, and releases values once
// their last reader has run.
//
// Memory: with a learned pattern, the frame reserves one arena block for the
// run and every planned intermediate is a view at its fixed offset; anything
// else (graph outputs, values escaping through aliases, sizes beyond the plan)
// gets its own arena chunk. In learning mode the frame records each buffer's
// size, writer, and the views aliasing it, and Learn() folds that into a pattern.
// Thread-hostile: one frame per run.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/execution_plan.h"
#include "exec/pattern_cache.h"
#include "framework/bfc_arena.h"
#include "onyx/run_options.h"
#include "onyx/session_stats.h"

namespace onyx {

class Profiler;

struct FrameMemory {
  BFCArena* arena = nullptr;                // nullptr: plain heap tensors
  const LearnedPattern* pattern = nullptr;  // reserve one block laid out by it
  bool learn = false;                       // record buffers for Learn()
};

class ExecutionFrame {
 public:
  ExecutionFrame(const ExecutionPlan& plan, const RunOptions& options, FrameMemory memory = {});

  // RESOURCE_EXHAUSTED when the pattern block cannot be reserved.
  absl::Status Init();

  const ExecutionPlan& plan() const { return plan_; }
  const RunOptions& run_options() const { return options_; }
  BFCArena* arena() const { return memory_.arena; }

  const Value& value(int slot) const { return values_[slot]; }
  Value& mutable_value(int slot) { return values_[slot]; }
  // Sets a kernel-provided value (e.g. a view of an input), noting aliases.
  void SetValue(int slot, Value value);

  // Makes the kernel producing `slot` write into `tensor`'s memory (IOBinding)
  // when it allocates an output of the same type and shape.
  void BindOutput(int slot, const Tensor& tensor) { bound_[slot] = tensor; }

  // Allocates a tensor for `slot`, replacing any previous value; zero-filled
  // unless `zero_fill` is false (the kernel writes every element).
  // `device_arena` (a non-host provider's memory) bypasses patterns and bindings.
  absl::StatusOr<Tensor*> AllocateTensor(int slot, DataType type, absl::Span<const int64_t> dims,
                                         BFCArena* device_arena = nullptr, bool zero_fill = true);
  void Release(int slot) { values_[slot] = Value(); }
  // Drops every value except graph outputs, and the run's pattern block.
  void ReleaseAll();
  void set_current_node(int position) { current_node_ = position; }
  // Records this run's node events when set (nullptr: not profiled).
  void set_profiler(Profiler* profiler) { profiler_ = profiler; }
  Profiler* profiler() const { return profiler_; }

  // After a successful learning run: the pattern for the planned buffers.
  std::shared_ptr<const LearnedPattern> Learn() const;

 private:
  struct Recorded {
    const char* begin;
    size_t bytes;
    int first;
  };

  const ExecutionPlan& plan_;
  const RunOptions& options_;
  FrameMemory memory_;
  std::vector<Value> values_;
  std::shared_ptr<void> block_;
  int current_node_ = 0;
  Profiler* profiler_ = nullptr;
  std::map<int, Tensor> bound_;       // caller buffers for graph outputs
  std::map<int, Recorded> recorded_;  // slot -> buffer it owns (learning)
  // Learning: buffers still alive by address -> (bytes, owning slot), and every
  // (view slot, viewed buffer slot) pair seen.
  std::map<const char*, std::pair<size_t, int>> live_;
  std::vector<std::pair<int, int>> aliases_;
};

}  // namespace onyx
