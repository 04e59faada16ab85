#include "exec/frame_kernel_context.h"

#include "absl/strings/str_cat.h"
#include "exec/executor.h"
#include "onyx/status_macros.h"

namespace onyx {

const Value* FrameKernelContext::InputValue(int i) const {
  if (i < 0 || i >= InputCount() || node_.inputs[i] < 0) return nullptr;
  return &frame_.value(node_.inputs[i]);
}

absl::StatusOr<Tensor*> FrameKernelContext::AllocateOutput(int i, absl::Span<const int64_t> dims, DataType type,
                                                           bool zero_fill) {
  if (!OutputRequested(i)) {
    // An omitted optional output: give the kernel scratch it may write into.
    scratch_.push_back(Value(Tensor::Allocate(type, dims)));
    return &scratch_.back().mutable_tensor();
  }
  for (int64_t d : dims) {
    if (d < 0) return Error(absl::StrCat("output ", i, " has negative dimension in ", DimsToString(dims)));
  }
  return frame_.AllocateTensor(node_.outputs[i], type, dims, node_.arena, zero_fill);
}

void FrameKernelContext::SetOutput(int i, Value value) {
  if (!OutputRequested(i)) return;
  frame_.SetValue(node_.outputs[i], std::move(value));
}

Tensor* FrameKernelContext::OutputTensor(int i) {
  if (!OutputRequested(i)) return nullptr;
  Value& v = frame_.mutable_value(node_.outputs[i]);
  return v.is_tensor() ? &v.mutable_tensor() : nullptr;
}

absl::Status FrameKernelContext::RunSubgraph(const ExecutionPlan& plan, const std::vector<Value>& inputs,
                                             std::vector<Value>* outputs) {
  if (inputs.size() > plan.feed_slots.size()) {
    return Error(absl::StrCat("subgraph takes ", plan.feed_slots.size(), " inputs, received ", inputs.size()));
  }
  ExecutionFrame sub(plan, frame_.run_options(), FrameMemory{frame_.arena(), nullptr, false});
  sub.set_profiler(frame_.profiler());
  for (const auto& [own, parent] : plan.outer_scope) sub.mutable_value(own) = frame_.value(parent);
  for (size_t i = 0; i < inputs.size(); ++i) sub.mutable_value(plan.feed_slots[i]) = inputs[i];
  RETURN_IF_ERROR(ExecutePlan(sub));
  outputs->clear();
  outputs->reserve(plan.output_slots.size());
  for (int slot : plan.output_slots) outputs->push_back(sub.value(slot));
  return absl::OkStatus();
}

}  // namespace onyx
