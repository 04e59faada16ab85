#include "framework/kernel_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/defs/schema.h"

namespace onyx {
namespace {

// Returns "" when every constrained type of the node is allowed by `def`,
// otherwise a description of the first mismatch.
std::string TypeMismatch(const KernelDef& def, const Node& node, const Graph& graph,
                         const onnx::OpSchema* schema) {
  if (def.type_constraints.empty() || schema == nullptr) return "";
  auto check = [&](const std::vector<onnx::OpSchema::FormalParameter>& formals,
                   const std::vector<std::string>& values, absl::string_view what) -> std::string {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].empty() || formals.empty()) continue;
      const auto& formal = formals[std::min(i, formals.size() - 1)];
      auto allowed = def.type_constraints.find(formal.GetTypeStr());
      if (allowed == def.type_constraints.end()) continue;
      const ValueInfo* info = graph.FindValueInfo(values[i]);
      if (info == nullptr || info->type == DataType::kUndefined) continue;
      if (std::find(allowed->second.begin(), allowed->second.end(), info->type) == allowed->second.end()) {
        return absl::StrCat("type not supported: ", what, " ", i, " ('", values[i], "') is ",
                            DataTypeName(info->type), " (type parameter ", formal.GetTypeStr(), ")");
      }
    }
    return "";
  };
  std::string in = check(schema->inputs(), node.inputs, "input");
  if (!in.empty()) return in;
  return check(schema->outputs(), node.outputs, "output");
}

}  // namespace

void KernelRegistry::Register(KernelDef def, KernelFactory factory) {
  auto key = std::make_pair(def.domain, def.op_type);
  kernels_[key].push_back(Entry{std::move(def), std::move(factory)});
  ++count_;
}

absl::StatusOr<const KernelRegistry::Entry*> KernelRegistry::Lookup(const Node& node,
                                                                    const Graph& graph) const {
  auto it = kernels_.find({node.domain, node.op_type});
  if (it == kernels_.end()) {
    bool domain_served = false;
    for (const auto& [key, list] : kernels_) domain_served |= (key.first == node.domain);
    if (!domain_served) {
      return absl::NotFoundError(absl::StrCat("wrong domain: no kernels for domain '", node.domain, "' (",
                                              node.Label(), ")"));
    }
    return absl::NotFoundError(absl::StrCat("no kernel for op ", node.op_type,
                                            node.domain.empty() ? "" : " in domain " + node.domain));
  }
  const onnx::OpSchema* schema = nullptr;
  int64_t opset = node.since_version > 0 ? node.since_version : graph.OpsetFor(node.domain);
  if (opset > 0) {
    schema = onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(opset), node.domain);
  }
  int version = node.since_version;
  std::string type_reason;
  std::vector<std::string> ranges;
  for (const Entry& e : it->second) {
    if (version != 0 && (version < e.def.since_version || version > e.def.end_version)) {
      ranges.push_back(e.def.end_version == INT_MAX ? absl::StrCat(e.def.since_version, "+")
                                                    : absl::StrCat(e.def.since_version, "-", e.def.end_version));
      continue;
    }
    std::string mismatch = TypeMismatch(e.def, node, graph, schema);
    if (mismatch.empty()) return &e;
    if (type_reason.empty()) type_reason = mismatch;
  }
  if (!type_reason.empty()) return absl::NotFoundError(type_reason);
  return absl::NotFoundError(absl::StrCat("opset not covered: ", node.op_type, " version ", version,
                                          " (kernels cover ", absl::StrJoin(ranges, ", "), ")"));
}

std::vector<const KernelRegistry::Entry*> KernelRegistry::Entries(const std::string& domain,
                                                                  const std::string& op_type) const {
  std::vector<const Entry*> out;
  auto it = kernels_.find({domain, op_type});
  if (it == kernels_.end()) return out;
  for (const Entry& e : it->second) out.push_back(&e);
  return out;
}

std::vector<std::pair<std::string, std::string>> KernelRegistry::Ops() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, list] : kernels_) out.push_back(key);
  return out;
}

}  // namespace onyx
