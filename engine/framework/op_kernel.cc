#include "framework/op_kernel.h"

#include "absl/strings/str_cat.h"
#include "graph/tensor_proto.h"
#include "onnx/defs/schema.h"
#include "onyx/status_macros.h"

namespace onyx {

bool OpKernelInfo::HasAttr(const std::string& name) const { return node_.FindAttribute(name) != nullptr; }

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
  return absl::InvalidArgumentError(absl::StrCat(node.Label(), ": attribute '", name, "' is not of type ", expected));
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
absl::StatusOr<std::vector<int64_t>> OpKernelInfo::Attr<std::vector<int64_t>>(const std::string& name) const {
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
absl::StatusOr<std::vector<std::string>> OpKernelInfo::Attr<std::vector<std::string>>(const std::string& name) const {
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

absl::Status OpKernelContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(node().Label(), ": ", message));
}

}  // namespace onyx
