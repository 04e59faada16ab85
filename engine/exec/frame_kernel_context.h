// FrameKernelContext: the OpKernelContext of one node run by the executor,
// reading inputs from and allocating outputs in the run's ExecutionFrame.
// Created on the stack for one Compute call; not thread-safe.
#pragma once

#include <deque>
#include <vector>

#include "exec/execution_frame.h"
#include "framework/op_kernel.h"

namespace onyx {

class FrameKernelContext final : public OpKernelContext {
 public:
  FrameKernelContext(ExecutionFrame& frame, const NodeRuntime& node) : frame_(frame), node_(node) {}

  int InputCount() const override { return static_cast<int>(node_.inputs.size()); }
  const Value* InputValue(int i) const override;
  int OutputCount() const override { return static_cast<int>(node_.outputs.size()); }
  bool OutputRequested(int i) const override { return i >= 0 && i < OutputCount() && node_.outputs[i] >= 0; }
  void SetOutput(int i, Value value) override;
  Tensor* OutputTensor(int i) override;
  const Node& node() const override { return *node_.node; }
  absl::Status RunSubgraph(const ExecutionPlan& plan, const std::vector<Value>& inputs,
                           std::vector<Value>* outputs) override;

 protected:
  absl::StatusOr<Tensor*> AllocateOutput(int i, absl::Span<const int64_t> dims, DataType type, bool zero_fill) override;

 private:
  ExecutionFrame& frame_;
  const NodeRuntime& node_;
  std::deque<Value> scratch_;  // storage for omitted optional outputs
};

}  // namespace onyx
