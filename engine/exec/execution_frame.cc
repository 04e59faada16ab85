#include "exec/execution_frame.h"

#include <cstring>
#include <set>

namespace onyx {

ExecutionFrame::ExecutionFrame(const ExecutionPlan& plan, const RunOptions& options, FrameMemory memory)
    : plan_(plan), options_(options), memory_(memory), values_(plan.num_slots()) {
  for (const auto& [slot, tensor] : plan.constants) values_[slot] = Value(tensor);
}

absl::Status ExecutionFrame::Init() {
  if (memory_.pattern == nullptr || memory_.arena == nullptr || memory_.pattern->pattern.total_bytes == 0) {
    return absl::OkStatus();
  }
  BFCArena* arena = memory_.arena;
  auto block = arena->Allocate(memory_.pattern->pattern.total_bytes);
  if (!block.ok()) return block.status();
  block_ = arena->OwnChunk(*block);
  return absl::OkStatus();
}

void ExecutionFrame::SetValue(int slot, Value value) {
  if (memory_.learn) {
    // A view of a recorded buffer (or a sequence holding one) keeps it alive.
    auto note = [&](const Tensor& t) {
      const char* p = static_cast<const char*>(t.raw());
      if (p == nullptr || live_.empty()) return;
      auto it = live_.upper_bound(p);
      if (it == live_.begin()) return;
      --it;
      if (p < it->first + std::max<size_t>(it->second.first, 1)) aliases_.emplace_back(slot, it->second.second);
    };
    if (value.is_tensor()) note(value.tensor());
    if (value.is_sequence()) {
      for (const Tensor& t : value.sequence()) note(t);
    }
  }
  values_[slot] = std::move(value);
}

absl::StatusOr<Tensor*> ExecutionFrame::AllocateTensor(int slot, DataType type, absl::Span<const int64_t> dims,
                                                       BFCArena* device_arena, bool zero_fill) {
  if (device_arena != nullptr && type != DataType::kString) {
    const size_t bytes = static_cast<size_t>(NumElements(dims)) * ElementSize(type);
    auto chunk = device_arena->Allocate(bytes);
    if (!chunk.ok()) return chunk.status();
    void* data = *chunk;
    if (bytes > 0 && zero_fill && device_arena->host_accessible()) std::memset(data, 0, bytes);
    values_[slot] = Value(Tensor::FromBuffer(type, dims, data, device_arena->OwnChunk(data)));
    return &values_[slot].mutable_tensor();
  }
  if (!bound_.empty()) {
    auto it = bound_.find(slot);
    if (it != bound_.end() && it->second.type() == type && it->second.dims() == Dims(dims.begin(), dims.end())) {
      values_[slot] = Value(it->second);
      Tensor& t = values_[slot].mutable_tensor();
      if (zero_fill && type != DataType::kString && t.byte_size() > 0) std::memset(t.mutable_raw(), 0, t.byte_size());
      return &t;
    }
  }
  if (type == DataType::kString || memory_.arena == nullptr) {
    values_[slot] = Value(Tensor::Allocate(type, dims));
    return &values_[slot].mutable_tensor();
  }
  const size_t bytes = static_cast<size_t>(NumElements(dims)) * ElementSize(type);
  void* data = nullptr;
  std::shared_ptr<void> owner;
  if (block_ != nullptr) {
    const MemoryPattern& pattern = memory_.pattern->pattern;
    auto it = pattern.offset_of.find(slot);
    if (it != pattern.offset_of.end() && pattern.bytes_of.at(slot) >= bytes) {
      data = static_cast<char*>(block_.get()) + it->second;
      owner = block_;
    }
  }
  if (data == nullptr) {
    BFCArena* arena = memory_.arena;
    auto chunk = arena->Allocate(bytes);
    if (!chunk.ok()) return chunk.status();
    data = *chunk;
    owner = arena->OwnChunk(data);
  }
  const bool in_place = owner == block_ && block_ != nullptr && memory_.pattern->inplace_slots.count(slot);
  if (bytes > 0 && !in_place && zero_fill) std::memset(data, 0, bytes);
  values_[slot] = Value(Tensor::FromBuffer(type, dims, data, std::move(owner)));
  if (memory_.learn) {
    const char* begin = static_cast<const char*>(data);
    recorded_[slot] = Recorded{begin, bytes, current_node_};
    // The arena hands out these bytes again only once every earlier buffer
    // overlapping them is dead: forget those, so views resolve to live buffers.
    auto it = live_.lower_bound(begin);
    if (it != live_.begin() && std::prev(it)->first + std::max<size_t>(std::prev(it)->second.first, 1) > begin) --it;
    while (it != live_.end() && it->first < begin + std::max<size_t>(bytes, 1)) it = live_.erase(it);
    live_[begin] = {bytes, slot};
  }
  return &values_[slot].mutable_tensor();
}

void ExecutionFrame::ReleaseAll() {
  std::vector<bool> keep(values_.size(), false);
  for (int s : plan_.output_slots) keep[s] = true;
  for (size_t s = 0; s < values_.size(); ++s) {
    if (!keep[s]) values_[s] = Value();
  }
  block_.reset();
}

std::shared_ptr<const LearnedPattern> ExecutionFrame::Learn() const {
  // Where each slot dies: the node that releases it; never = escapes the run.
  constexpr int kNever = 1 << 30;
  std::vector<int> dies(plan_.num_slots(), kNever);
  for (int i = 0; i < static_cast<int>(plan_.nodes.size()); ++i) {
    for (int s : plan_.nodes[i].release_after) dies[s] = i;
  }
  std::map<int, int> last;  // root slot -> last use over itself and its views
  for (const auto& [slot, rec] : recorded_) last[slot] = dies[slot];
  for (const auto& [view, root] : aliases_) {
    if (last.count(root)) last[root] = std::max(last[root], dies[view]);
  }
  // In place: an output of a kernel that allows it takes over its input's
  // buffer when the input dies at that node (no view outlives it) and the sizes
  // match. Groups chain (x -> Relu -> Sigmoid): each joins its root's buffer.
  std::map<int, int> root_of;
  auto root = [&](int slot) {
    while (root_of.count(slot)) slot = root_of[slot];
    return slot;
  };
  for (int pos = 0; pos < static_cast<int>(plan_.nodes.size()); ++pos) {
    const NodeRuntime& node = plan_.nodes[pos];
    for (const auto& [i, o] : node.may_inplace) {
      if (i >= static_cast<int>(node.inputs.size()) || o >= static_cast<int>(node.outputs.size())) continue;
      const int in = node.inputs[i], out = node.outputs[o];
      if (in < 0 || out < 0 || in == out || !recorded_.count(in) || !recorded_.count(out)) continue;
      if (recorded_.at(in).bytes != recorded_.at(out).bytes || last[in] != pos || last[out] == kNever) continue;
      if (root_of.count(out)) continue;
      bool input_used_twice = false;
      for (size_t k = 0; k < node.inputs.size(); ++k)
        input_used_twice |= (k != static_cast<size_t>(i) && node.inputs[k] == in);
      if (input_used_twice) continue;
      root_of[out] = in;
    }
  }
  std::map<int, int> group_last;
  for (const auto& [slot, rec] : recorded_) {
    if (last[slot] == kNever) continue;
    int r = root(slot);
    group_last[r] = std::max(group_last.count(r) ? group_last[r] : last[slot], last[slot]);
  }
  std::vector<BufferRequest> requests;
  size_t without_reuse = 0;
  for (const auto& [slot, rec] : recorded_) {
    if (last[slot] == kNever) continue;  // a graph output or viewed by one
    without_reuse += (std::max<size_t>(rec.bytes, 1) + 63) / 64 * 64;
    if (root(slot) != slot) continue;
    requests.push_back(BufferRequest{slot, rec.bytes, rec.first, group_last[slot]});
  }
  auto learned = std::make_shared<LearnedPattern>();
  learned->pattern = PlanMemoryPattern(requests);
  learned->bytes_without_reuse = without_reuse;
  for (const auto& [member, parent] : root_of) {
    int r = root(member);
    if (!learned->pattern.offset_of.count(r)) continue;
    learned->pattern.offset_of[member] = learned->pattern.offset_of[r];
    learned->pattern.bytes_of[member] = learned->pattern.bytes_of[r];
    learned->inplace_slots.insert(member);
  }
  return learned;
}

}  // namespace onyx
