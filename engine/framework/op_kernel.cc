#include "framework/op_kernel.h"

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "exec/execution_frame.h"
#include "exec/executor.h"
#include "framework/tensor_proto.h"
#include "onnx/defs/schema.h"

namespace onyx {

bool OpKernelInfo::HasAttr(const std::string& name) const {
  return node_.FindAttribute(name) != nullptr;
}

const onnx::AttributeProto* OpKernelInfo::FindAttrOrDefault(const std::string& name) const {
  if (const auto* a = node_.FindAttribute(name)) return a;
  if (schema_ == nullptr) return nullptr;
  auto it = schema_->attributes().find(name);
  if (it == schema_->attributes().end() || !it->second.default_value.has_type()) return nullptr;
  return &it->second.default_value;
}

absl::Status OpKernelInfo::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(node_.Label(), ": ", message));
}

namespace {
absl::Status MissingAttr(const Node& node, const std::string& name) {
  return absl::NotFoundError(absl::StrCat(node.Label(), ": required attribute '", name, "' is missing"));
}
absl::Status WrongAttrType(const Node& node, const std::string& name, absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat(node.Label(), ": attribute '", name, "' is not of type ", expected));
}
}  // namespace

template <>
absl::StatusOr<int64_t> OpKernelInfo::Attr<int64_t>(const std::string& name) const {
  const auto* a = FindAttrOrDefault(name);
  if (a == nullptr) return MissingAttr(node_, name);
  if (a->type() != onnx::AttributeProto::INT && !a->has_i()) return WrongAttrType(node_, name, "int");
  return a->i();
}

template <>
absl::StatusOr<float> OpKernelInfo::Attr<float>(const std::string& name) const {
  const auto* a = FindAttrOrDefault(name);
  if (a == nullptr) return MissingAttr(node_, name);
  if (a->type() != onnx::AttributeProto::FLOAT && !a->has_f()) return WrongAttrType(node_, name, "float");
  return a->f();
}

template <>
absl::StatusOr<std::string> OpKernelInfo::Attr<std::string>(const std::string& name) const {
  const auto* a = FindAttrOrDefault(name);
  if (a == nullptr) return MissingAttr(node_, name);
  if (a->type() != onnx::AttributeProto::STRING && !a->has_s()) {
    return WrongAttrType(node_, name, "string");
  }
  return a->s();
}

template <>
absl::StatusOr<std::vector<int64_t>> OpKernelInfo::Attr<std::vector<int64_t>>(
    const std::string& name) const {
  const auto* a = FindAttrOrDefault(name);
  if (a == nullptr) return MissingAttr(node_, name);
  if (a->type() != onnx::AttributeProto::INTS && a->ints_size() == 0) {
    if (a->type() != onnx::AttributeProto::UNDEFINED) return WrongAttrType(node_, name, "ints");
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

template <>
absl::StatusOr<std::vector<float>> OpKernelInfo::Attr<std::vector<float>>(const std::string& name) const {
  const auto* a = FindAttrOrDefault(name);
  if (a == nullptr) return MissingAttr(node_, name);
  if (a->type() != onnx::AttributeProto::FLOATS && a->floats_size() == 0) {
    if (a->type() != onnx::AttributeProto::UNDEFINED) return WrongAttrType(node_, name, "floats");
  }
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

template <>
absl::StatusOr<std::vector<std::string>> OpKernelInfo::Attr<std::vector<std::string>>(
    const std::string& name) const {
  const auto* a = FindAttrOrDefault(name);
  if (a == nullptr) return MissingAttr(node_, name);
  if (a->type() != onnx::AttributeProto::STRINGS && a->strings_size() == 0) {
    if (a->type() != onnx::AttributeProto::UNDEFINED) return WrongAttrType(node_, name, "strings");
  }
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

template <>
absl::StatusOr<Tensor> OpKernelInfo::Attr<Tensor>(const std::string& name) const {
  const auto* a = FindAttrOrDefault(name);
  if (a == nullptr) return MissingAttr(node_, name);
  if (!a->has_t()) return WrongAttrType(node_, name, "tensor");
  auto t = TensorFromProto(a->t());
  if (!t.ok()) return Error(absl::StrCat("attribute '", name, "': ", t.status().message()));
  return t;
}

const ValueInfo* OpKernelInfo::InputInfo(int i) const {
  if (!HasInput(i)) return nullptr;
  return graph_.FindValueInfo(node_.inputs[i]);
}

DataType OpKernelInfo::InputType(int i) const {
  const ValueInfo* info = InputInfo(i);
  return info ? info->type : DataType::kUndefined;
}

DataType OpKernelInfo::OutputType(int i) const {
  if (i >= OutputCount() || node_.outputs[i].empty()) return DataType::kUndefined;
  const ValueInfo* info = graph_.FindValueInfo(node_.outputs[i]);
  return info ? info->type : DataType::kUndefined;
}

const Tensor* OpKernelInfo::ConstantInput(int i) const {
  if (!HasInput(i)) return nullptr;
  for (const Graph* g = &graph_; g != nullptr; g = g->parent()) {
    if (const Tensor* t = g->FindInitializer(node_.inputs[i])) {
      // A declared graph input with an initializer may be overridden by a feed.
      bool overridable = false;
      if (g->parent() == nullptr) {
        for (const auto& d : g->declared_inputs()) overridable |= (d == node_.inputs[i]);
      }
      return overridable ? nullptr : t;
    }
  }
  return nullptr;
}

const ExecutionPlan* OpKernelInfo::SubgraphPlan(const std::string& attr) const {
  if (subplans_ == nullptr) return nullptr;
  auto it = subplans_->find(attr);
  return it == subplans_->end() ? nullptr : it->second.get();
}

const Graph* OpKernelInfo::Subgraph(const std::string& attr) const {
  auto it = node_.subgraphs.find(attr);
  return it == node_.subgraphs.end() ? nullptr : it->second.get();
}

int OpKernelContext::InputCount() const { return static_cast<int>(node_.inputs.size()); }
int OpKernelContext::OutputCount() const { return static_cast<int>(node_.outputs.size()); }

const Value* OpKernelContext::InputValue(int i) const {
  if (i < 0 || i >= InputCount() || node_.inputs[i] < 0) return nullptr;
  return &frame_.value(node_.inputs[i]);
}

const Tensor* OpKernelContext::Input(int i) const {
  const Value* v = InputValue(i);
  return (v != nullptr && v->is_tensor()) ? &v->tensor() : nullptr;
}

bool OpKernelContext::OutputRequested(int i) const {
  return i >= 0 && i < OutputCount() && node_.outputs[i] >= 0;
}

absl::StatusOr<Tensor*> OpKernelContext::Output(int i, absl::Span<const int64_t> dims, DataType type) {
  if (!OutputRequested(i)) {
    // An omitted optional output: give the kernel scratch it may write into.
    scratch_.push_back(Value(Tensor::Allocate(type, dims)));
    return &scratch_.back().mutable_tensor();
  }
  for (int64_t d : dims) {
    if (d < 0) return Error(absl::StrCat("output ", i, " has negative dimension in ", DimsToString(dims)));
  }
  return frame_.AllocateTensor(node_.outputs[i], type, dims, node_.arena);
}

void OpKernelContext::SetOutput(int i, Value value) {
  if (!OutputRequested(i)) return;
  frame_.SetValue(node_.outputs[i], std::move(value));
}

Tensor* OpKernelContext::OutputTensor(int i) {
  if (!OutputRequested(i)) return nullptr;
  Value& v = frame_.mutable_value(node_.outputs[i]);
  return v.is_tensor() ? &v.mutable_tensor() : nullptr;
}

const Node& OpKernelContext::node() const { return *node_.node; }

absl::Status OpKernelContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(node_.node->Label(), ": ", message));
}

}  // namespace onyx

namespace onyx {

absl::Status OpKernelContext::RunSubgraph(const ExecutionPlan& plan, const std::vector<Value>& inputs,
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
