#include "partition/function_inliner.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"
#include "onyx/status_macros.h"

namespace onyx {
namespace {

bool HasKernel(const Node& node, const Graph& graph, const std::vector<const IExecutionProvider*>& providers) {
  for (const auto* p : providers) {
    if (p->kernel_registry().Lookup(node, graph).ok()) return true;
  }
  return false;
}

// The function body defining `node`, if any.
bool FindFunction(const Node& node, const Graph& graph, const std::vector<onnx::FunctionProto>& local_functions,
                  onnx::FunctionProto* out) {
  for (const auto& f : local_functions) {
    if (f.name() == node.op_type && f.domain() == node.domain) {
      *out = f;
      return true;
    }
  }
  int64_t opset = graph.OpsetFor(node.domain);
  if (opset <= 0) return false;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(opset), node.domain);
  if (schema == nullptr) return false;
  if (schema->HasFunction() && schema->GetFunction() != nullptr) {
    *out = *schema->GetFunction();
    return true;
  }
  if (schema->HasContextDependentFunction()) {
    onnx::NodeProto proto;
    proto.set_op_type(node.op_type);
    proto.set_domain(node.domain);
    for (const auto& i : node.inputs) proto.add_input(i);
    for (const auto& o : node.outputs) proto.add_output(o);
    for (const auto& [name, attr] : node.attributes) *proto.add_attribute() = attr;
    std::vector<onnx::TypeProto> types;
    for (const auto& i : node.inputs) {
      onnx::TypeProto t;
      if (const ValueInfo* info = graph.FindValueInfo(i)) ValueInfoToTypeProto(*info, &t);
      types.push_back(t);
    }
    onnx::FunctionBodyBuildContextImpl ctx(proto, types);
    try {
      return schema->BuildContextDependentFunction(ctx, *out);
    } catch (const std::exception&) {
      return false;  // the node then reports "no kernel" at partitioning
    }
  }
  return false;
}

void RenameInGraphProto(onnx::GraphProto* g, const std::map<std::string, std::string>& names) {
  std::set<std::string> local;
  for (const auto& i : g->input()) local.insert(i.name());
  for (const auto& n : g->node()) {
    for (const auto& o : n.output()) local.insert(o);
  }
  auto rename = [&](std::string* v) {
    if (local.count(*v)) return;
    auto it = names.find(*v);
    if (it != names.end()) *v = it->second;
  };
  for (auto& n : *g->mutable_node()) {
    for (auto& i : *n.mutable_input()) rename(&i);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RenameInGraphProto(a.mutable_g(), names);
    }
  }
  for (auto& o : *g->mutable_output()) rename(o.mutable_name());
}

// The caller's attribute `name`, or the op schema's default for it.
const onnx::AttributeProto* CallerAttribute(const Graph& graph, const Node& call, const std::string& name) {
  if (const auto* given = call.FindAttribute(name)) return given;
  int64_t opset = graph.OpsetFor(call.domain);
  const onnx::OpSchema* schema =
      opset > 0 ? onnx::OpSchemaRegistry::Schema(call.op_type, static_cast<int>(opset), call.domain) : nullptr;
  if (schema == nullptr) return nullptr;
  auto it = schema->attributes().find(name);
  if (it == schema->attributes().end() || !it->second.default_value.has_type()) return nullptr;
  return &it->second.default_value;
}

absl::Status Expand(Graph& graph, Node& call, const onnx::FunctionProto& function) {
  const std::string prefix = graph.UniqueValueName(call.name.empty() ? call.op_type : call.name);
  std::map<std::string, std::string> names;
  for (int i = 0; i < function.input_size(); ++i) {
    names[function.input(i)] = i < static_cast<int>(call.inputs.size()) ? call.inputs[i] : "";
  }
  for (int i = 0; i < function.output_size(); ++i) {
    names[function.output(i)] = i < static_cast<int>(call.outputs.size()) ? call.outputs[i] : "";
  }
  auto mapped = [&](const std::string& v) -> std::string {
    if (v.empty()) return v;
    auto it = names.find(v);
    if (it != names.end()) return it->second;
    std::string renamed = prefix + "/" + v;
    names[v] = renamed;
    return renamed;
  };
  std::map<std::string, int64_t> opsets = graph.opsets();
  for (const auto& op : function.opset_import()) opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();

  std::vector<std::unique_ptr<Node>> expanded;
  for (const auto& np : function.node()) {
    auto node = std::make_unique<Node>();
    node->name = prefix + "/" + (np.name().empty() ? np.op_type() : np.name());
    node->op_type = np.op_type();
    node->domain = np.domain() == "ai.onnx" ? "" : np.domain();
    for (const auto& i : np.input()) node->inputs.push_back(mapped(i));
    for (const auto& o : np.output()) node->outputs.push_back(mapped(o));
    auto opset = opsets.find(node->domain);
    if (opset != opsets.end()) {
      const onnx::OpSchema* schema =
          onnx::OpSchemaRegistry::Schema(node->op_type, static_cast<int>(opset->second), node->domain);
      if (schema != nullptr) node->since_version = schema->since_version();
    }
    for (const auto& a : np.attribute()) {
      onnx::AttributeProto attr = a;
      if (!a.ref_attr_name().empty()) {
        const onnx::AttributeProto* given = CallerAttribute(graph, call, a.ref_attr_name());
        if (given == nullptr) continue;  // the inner op's default applies
        attr = *given;
        attr.set_name(a.name());
      }
      if (attr.has_g()) {
        onnx::GraphProto body = attr.g();
        RenameInGraphProto(&body, names);
        attr.clear_g();
        ASSIGN_OR_RETURN(auto sub, Graph::FromProto(body, opsets, "", &graph));
        node->subgraphs[attr.name()] = std::move(sub);
      }
      node->attributes[attr.name()] = attr;
    }
    expanded.push_back(std::move(node));
  }
  graph.RemoveNode(call.index);
  for (auto& n : expanded) graph.AddNode(std::move(n));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> InlineFunctions(Graph& graph, const std::vector<const IExecutionProvider*>& providers,
                                    const std::vector<onnx::FunctionProto>& local_functions) {
  int expanded = 0;
  for (Node* node : graph.Nodes()) {
    for (auto& [attr, sub] : node->subgraphs) {
      ASSIGN_OR_RETURN(int n, InlineFunctions(*sub, providers, local_functions));
      expanded += n;
    }
    if (HasKernel(*node, graph, providers)) continue;
    onnx::FunctionProto function;
    if (!FindFunction(*node, graph, local_functions, &function)) continue;
    RETURN_IF_ERROR(Expand(graph, *node, function));
    ++expanded;
  }
  return expanded;
}

}  // namespace onyx
