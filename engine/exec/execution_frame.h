// ExecutionFrame: the values of one run of an ExecutionPlan. Binds feeds and
// constants to their slots, allocates outputs for kernels, and releases values
// once their last reader has run. Thread-hostile: one frame per run.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "exec/execution_plan.h"
#include "onyx/session.h"

namespace onyx {

class ExecutionFrame {
 public:
  ExecutionFrame(const ExecutionPlan& plan, const RunOptions& options);

  const ExecutionPlan& plan() const { return plan_; }
  const RunOptions& run_options() const { return options_; }

  const Value& value(int slot) const { return values_[slot]; }
  Value& mutable_value(int slot) { return values_[slot]; }

  // Allocates a tensor for `slot`, replacing any previous value.
  absl::StatusOr<Tensor*> AllocateTensor(int slot, DataType type, absl::Span<const int64_t> dims);
  void Release(int slot) { values_[slot] = Value(); }

 private:
  const ExecutionPlan& plan_;
  const RunOptions& options_;
  std::vector<Value> values_;
};

}  // namespace onyx
