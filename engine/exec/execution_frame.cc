#include "exec/execution_frame.h"

namespace onyx {

ExecutionFrame::ExecutionFrame(const ExecutionPlan& plan, const RunOptions& options)
    : plan_(plan), options_(options), values_(plan.num_slots()) {
  for (const auto& [slot, tensor] : plan.constants) values_[slot] = Value(tensor);
}

absl::StatusOr<Tensor*> ExecutionFrame::AllocateTensor(int slot, DataType type,
                                                       absl::Span<const int64_t> dims) {
  values_[slot] = Value(Tensor::Allocate(type, dims));
  return &values_[slot].mutable_tensor();
}

}  // namespace onyx
