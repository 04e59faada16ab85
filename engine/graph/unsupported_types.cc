#include "graph/unsupported_types.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"

namespace onyx {
namespace {

// Element type of a tensor, sequence-of-tensor or optional type (0 if none).
int32_t ElemType(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return type.tensor_type().elem_type();
  if (type.has_sequence_type()) return ElemType(type.sequence_type().elem_type());
  if (type.has_optional_type()) return ElemType(type.optional_type().elem_type());
  return 0;
}

std::string NodeLabel(const onnx::NodeProto& node, const std::map<std::string, int64_t>& opsets) {
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  std::string label = node.op_type();
  auto it = opsets.find(domain);
  if (it != opsets.end()) {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(it->second), domain);
    absl::StrAppend(&label, "-", schema != nullptr ? schema->since_version() : it->second);
  }
  if (!node.name().empty()) absl::StrAppend(&label, " '", node.name(), "'");
  return label;
}

}  // namespace

const char* NewerElementTypeName(int32_t onnx_type) {
  static const char* const kNames[] = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",
                                       "int4",         "float4e2m1",     "float8e8m0", "uint2",          "int2"};
  if (onnx_type < 17 || onnx_type > 26) return nullptr;
  return kNames[onnx_type - 17];
}

absl::Status CheckElementTypes(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets) {
  absl::flat_hash_map<std::string, int32_t> newer;  // value name -> its newer element type
  for (const auto& init : graph.initializer()) {
    if (NewerElementTypeName(init.data_type()) != nullptr) newer[init.name()] = init.data_type();
  }
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const auto& vi : *list) {
      const int32_t t = ElemType(vi.type());
      if (NewerElementTypeName(t) != nullptr) newer[vi.name()] = t;
    }
  }
  for (const auto& node : graph.node()) {
    if (!newer.empty()) {
      auto report = [&](const char* role, const std::string& value) {
        return absl::UnimplementedError(absl::StrCat(NodeLabel(node, opsets), ": ", role, " '", value,
                                                     "' has element type ", NewerElementTypeName(newer[value]),
                                                     ", which onyx does not support (no float8, 4-bit, float4 "
                                                     "or 2-bit tensors)"));
      };
      for (const auto& in : node.input()) {
        if (newer.count(in)) return report("input", in);
      }
      for (const auto& out : node.output()) {
        if (newer.count(out)) return report("output", out);
      }
    }
    for (const auto& attr : node.attribute()) {
      // A Constant (or any op) holding such a tensor as an attribute: no
      // declared value carries the type, so the attribute is named here.
      const onnx::TensorProto* held = attr.has_t() ? &attr.t() : nullptr;
      for (const auto& t : attr.tensors()) {
        if (held == nullptr && NewerElementTypeName(t.data_type()) != nullptr) held = &t;
      }
      if (held != nullptr && NewerElementTypeName(held->data_type()) != nullptr) {
        return absl::UnimplementedError(absl::StrCat(NodeLabel(node, opsets), ": attribute '", attr.name(),
                                                     "' holds a tensor of element type ",
                                                     NewerElementTypeName(held->data_type()),
                                                     ", which onyx does not support (no float8, 4-bit, float4 "
                                                     "or 2-bit tensors)"));
      }
      if (attr.has_g()) {
        absl::Status s = CheckElementTypes(attr.g(), opsets);
        if (!s.ok()) return s;
      }
      for (const auto& g : attr.graphs()) {
        absl::Status s = CheckElementTypes(g, opsets);
        if (!s.ok()) return s;
      }
    }
  }
  if (!newer.empty()) {
    const auto& [name, type] = *newer.begin();
    return absl::UnimplementedError(absl::StrCat("graph '", graph.name(), "': value '", name, "' has element type ",
                                                 NewerElementTypeName(type), ", which onyx does not support"));
  }
  return absl::OkStatus();
}

}  // namespace onyx
