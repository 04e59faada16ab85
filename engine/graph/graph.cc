#include "graph/graph.h"

#include "graph/schemas/newer_opsets.h"

#include <algorithm>
#include <deque>
#include <set>

#include "absl/strings/str_cat.h"
#include "graph/schemas/newer_opsets.h"
#include "graph/tensor_proto.h"
#include "onnx/defs/schema.h"
#include "onyx/status_macros.h"

namespace onyx {

std::string Node::Label() const {
  if (!name.empty()) return absl::StrCat(op_type, " '", name, "'");
  return absl::StrCat(op_type, " #", index);
}

const onnx::AttributeProto* Node::FindAttribute(const std::string& attr) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? nullptr : &it->second;
}

ValueInfo ValueInfoFromTypeProto(const std::string& name, const onnx::TypeProto& type) {
  ValueInfo info;
  info.name = name;
  const onnx::TypeProto* tensor_type = &type;
  if (type.has_sequence_type()) {
    info.kind = ValueInfo::Kind::kSequence;
    tensor_type = &type.sequence_type().elem_type();
  } else if (type.has_optional_type()) {
    info.kind = ValueInfo::Kind::kOptional;
    tensor_type = &type.optional_type().elem_type();
    if (tensor_type->has_sequence_type()) tensor_type = &tensor_type->sequence_type().elem_type();
  }
  if (tensor_type->has_tensor_type()) {
    const auto& t = tensor_type->tensor_type();
    info.type = static_cast<DataType>(t.elem_type());
    if (t.has_shape() && info.kind == ValueInfo::Kind::kTensor) {
      info.has_shape = true;
      for (const auto& d : t.shape().dim()) {
        info.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        info.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
  }
  return info;
}

void ValueInfoToTypeProto(const ValueInfo& info, onnx::TypeProto* type) {
  onnx::TypeProto::Tensor* tensor = nullptr;
  switch (info.kind) {
    case ValueInfo::Kind::kTensor: tensor = type->mutable_tensor_type(); break;
    case ValueInfo::Kind::kSequence:
      tensor = type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
      break;
    case ValueInfo::Kind::kOptional:
      tensor = type->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
      break;
  }
  tensor->set_elem_type(static_cast<int32_t>(info.type));
  if (!info.has_shape) return;
  auto* shape = tensor->mutable_shape();
  for (size_t i = 0; i < info.dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (info.dims[i] >= 0) {
      d->set_dim_value(info.dims[i]);
    } else if (i < info.dim_params.size() && !info.dim_params[i].empty()) {
      d->set_dim_param(info.dim_params[i]);
    }
  }
}

absl::StatusOr<std::unique_ptr<Graph>> Graph::TakeFromProto(onnx::GraphProto* proto,
                                                            const std::map<std::string, int64_t>& opsets,
                                                            const std::string& base_dir) {
  // Decode the initializers first, taking their bytes, then build the rest
  // from a proto without them.
  std::map<std::string, Tensor> initializers;
  for (auto& init : *proto->mutable_initializer()) {
    if (init.name().empty()) break;  // FromProto reports it
    ASSIGN_OR_RETURN(Tensor t, TakeTensorFromProto(&init, base_dir));
    initializers[init.name()] = std::move(t);
  }
  if (static_cast<int>(initializers.size()) != proto->initializer_size()) return FromProto(*proto, opsets, base_dir);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  kept.Swap(proto->mutable_initializer());
  auto graph = FromProto(*proto, opsets, base_dir);
  kept.Swap(proto->mutable_initializer());
  if (!graph.ok()) return graph;
  for (auto& [name, t] : initializers) (*graph)->SetInitializer(name, std::move(t));
  // Declared inputs with an initializer are overridable, not required feeds.
  std::vector<std::string> required;
  for (const auto& name : (*graph)->declared_inputs_) {
    if (!(*graph)->initializers_.count(name)) required.push_back(name);
  }
  (*graph)->inputs_ = std::move(required);
  // Keep the declared types of initializers that are graph inputs.
  for (const auto& vi : proto->input()) {
    if (vi.has_type() && (*graph)->initializers_.count(vi.name())) {
      (*graph)->value_infos_[vi.name()] = ValueInfoFromTypeProto(vi.name(), vi.type());
    }
  }
  return graph;
}

absl::StatusOr<std::unique_ptr<Graph>> Graph::FromProto(const onnx::GraphProto& proto,
                                                        const std::map<std::string, int64_t>& opsets,
                                                        const std::string& base_dir, const Graph* parent) {
  RegisterNewerOpsetSchemas();  // node versions below resolve against opsets up to kMaxOnnxOpset
  std::unique_ptr<Graph> g(new Graph());
  g->name_ = proto.name();
  g->parent_ = parent;
  g->opsets_ = opsets;
  g->doc_string_ = proto.doc_string();
  if (proto.sparse_initializer_size() > 0) {
    return absl::UnimplementedError(absl::StrCat("graph '", proto.name(), "': sparse initializers are not supported"));
  }
  for (const auto& init : proto.initializer()) {
    if (init.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("graph '", proto.name(), "': an initializer has no name"));
    }
    ASSIGN_OR_RETURN(Tensor t, TensorFromProto(init, base_dir));
    g->initializers_[init.name()] = std::move(t);
  }
  auto add_infos = [&](const auto& list) {
    for (const auto& vi : list) {
      if (vi.has_type()) g->value_infos_[vi.name()] = ValueInfoFromTypeProto(vi.name(), vi.type());
    }
  };
  add_infos(proto.input());
  add_infos(proto.value_info());
  add_infos(proto.output());
  for (const auto& vi : proto.input()) {
    g->declared_inputs_.push_back(vi.name());
    if (!g->initializers_.count(vi.name())) g->inputs_.push_back(vi.name());
  }
  for (const auto& vi : proto.output()) g->outputs_.push_back(vi.name());
  // Initializers that are not declared inputs still have a known type.
  for (const auto& [name, t] : g->initializers_) {
    if (g->value_infos_.count(name)) continue;
    ValueInfo info;
    info.name = name;
    info.type = t.type();
    info.has_shape = true;
    info.dims.assign(t.dims().begin(), t.dims().end());
    info.dim_params.assign(t.dims().size(), "");
    g->value_infos_[name] = info;
  }

  for (const auto& np : proto.node()) {
    auto node = std::make_unique<Node>();
    node->name = np.name();
    node->op_type = np.op_type();
    node->domain = np.domain() == "ai.onnx" ? "" : np.domain();
    node->inputs.assign(np.input().begin(), np.input().end());
    node->outputs.assign(np.output().begin(), np.output().end());
    int64_t opset = g->OpsetFor(node->domain);
    if (opset > 0) {
      const onnx::OpSchema* schema =
          onnx::OpSchemaRegistry::Schema(node->op_type, static_cast<int>(opset), node->domain);
      if (schema != nullptr) node->since_version = schema->since_version();
    }
    for (const auto& attr : np.attribute()) {
      node->attributes[attr.name()] = attr;
      if (attr.type() == onnx::AttributeProto::GRAPH || attr.has_g()) {
        node->attributes[attr.name()].clear_g();
        ASSIGN_OR_RETURN(auto sub, FromProto(attr.g(), opsets, base_dir, g.get()));
        node->subgraphs[attr.name()] = std::move(sub);
      } else if (attr.graphs_size() > 0) {
        return absl::UnimplementedError(
            absl::StrCat(node->Label(), ": attribute '", attr.name(), "' holds a list of graphs"));
      }
    }
    g->AddNode(std::move(node));
  }
  return g;
}

int64_t Graph::OpsetFor(const std::string& domain) const {
  auto it = opsets_.find(domain);
  if (it == opsets_.end() && domain.empty()) it = opsets_.find("ai.onnx");
  return it == opsets_.end() ? 0 : it->second;
}

const Tensor* Graph::FindInitializer(const std::string& value) const {
  auto it = initializers_.find(value);
  return it == initializers_.end() ? nullptr : &it->second;
}

void Graph::SetInitializer(const std::string& value, Tensor tensor) {
  ValueInfo info;
  info.name = value;
  info.type = tensor.type();
  info.has_shape = true;
  info.dims.assign(tensor.dims().begin(), tensor.dims().end());
  info.dim_params.assign(tensor.dims().size(), "");
  value_infos_[value] = info;
  initializers_[value] = std::move(tensor);
}

void Graph::RemoveInitializer(const std::string& value) {
  initializers_.erase(value);
  for (size_t i = 0; i < declared_inputs_.size(); ++i) {
    if (declared_inputs_[i] == value) {
      declared_inputs_.erase(declared_inputs_.begin() + i);
      break;
    }
  }
}

const ValueInfo* Graph::FindValueInfo(const std::string& value) const {
  auto it = value_infos_.find(value);
  if (it != value_infos_.end()) return &it->second;
  return parent_ != nullptr ? parent_->FindValueInfo(value) : nullptr;
}

void Graph::SetValueInfo(const std::string& value, ValueInfo info) {
  info.name = value;
  value_infos_[value] = std::move(info);
}

std::vector<Node*> Graph::Nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) {
    if (n) out.push_back(n.get());
  }
  return out;
}

Node* Graph::AddNode(std::unique_ptr<Node> node) {
  node->index = nodes_.size();
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

void Graph::RemoveNode(size_t index) { nodes_[index].reset(); }

Node* Graph::Producer(const std::string& value) const {
  if (value.empty()) return nullptr;
  for (const auto& n : nodes_) {
    if (!n) continue;
    for (const auto& o : n->outputs) {
      if (o == value) return n.get();
    }
  }
  return nullptr;
}

std::vector<Node*> Graph::Consumers(const std::string& value) const {
  std::vector<Node*> out;
  if (value.empty()) return out;
  std::vector<std::string> outer;
  for (const auto& n : nodes_) {
    if (!n) continue;
    bool uses = false;
    for (const auto& i : n->inputs) uses |= (i == value);
    if (!uses) {
      for (const auto& [attr, sub] : n->subgraphs) {
        for (const auto& v : sub->OuterScopeValues()) uses |= (v == value);
      }
    }
    if (uses) out.push_back(n.get());
  }
  return out;
}

bool Graph::IsOutput(const std::string& value) const {
  for (const auto& o : outputs_) {
    if (o == value) return true;
  }
  return false;
}

bool Graph::DefinesValue(const std::string& value) const {
  if (initializers_.count(value)) return true;
  for (const auto& i : declared_inputs_) {
    if (i == value) return true;
  }
  return Producer(value) != nullptr;
}

absl::StatusOr<std::vector<Node*>> Graph::TopologicalOrder() const {
  std::map<std::string, Node*> producer;
  for (const auto& n : nodes_) {
    if (!n) continue;
    for (const auto& o : n->outputs) {
      if (o.empty()) continue;
      if (producer.count(o)) {
        return absl::FailedPreconditionError(absl::StrCat("graph '", name_, "': value '", o, "' is produced by both ",
                                                          producer[o]->Label(), " and ", n->Label()));
      }
      producer[o] = n.get();
    }
  }
  std::map<Node*, int> pending;
  std::map<Node*, std::vector<Node*>> users;
  std::deque<Node*> ready;
  for (const auto& n : nodes_) {
    if (!n) continue;
    std::set<Node*> deps;
    std::vector<std::string> used(n->inputs.begin(), n->inputs.end());
    for (const auto& [attr, sub] : n->subgraphs) {
      for (const auto& v : sub->OuterScopeValues()) used.push_back(v);
    }
    for (const auto& in : used) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        if (it->second == n.get()) {
          return absl::FailedPreconditionError(absl::StrCat(n->Label(), " consumes its own output '", in, "'"));
        }
        deps.insert(it->second);
        continue;
      }
      bool known = initializers_.count(in) > 0;
      for (const auto& i : declared_inputs_) known |= (i == in);
      for (const Graph* p = parent_; !known && p != nullptr; p = p->parent_) {
        known = p->DefinesValue(in) || p->FindValueInfo(in) != nullptr;
      }
      if (!known) {
        return absl::FailedPreconditionError(
            absl::StrCat(n->Label(), " in graph '", name_, "': input '", in,
                         "' is not a graph input, an initializer or the output of any node"));
      }
    }
    pending[n.get()] = static_cast<int>(deps.size());
    for (Node* d : deps) users[d].push_back(n.get());
    if (deps.empty()) ready.push_back(n.get());
  }
  std::vector<Node*> order;
  while (!ready.empty()) {
    Node* n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (Node* u : users[n]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  if (order.size() != pending.size()) {
    for (const auto& [n, count] : pending) {
      if (count > 0) {
        return absl::FailedPreconditionError(absl::StrCat("graph '", name_, "' has a cycle through ", n->Label()));
      }
    }
  }
  for (const auto& o : outputs_) {
    if (!producer.count(o) && !DefinesValue(o) && parent_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("graph '", name_, "': output '", o, "' is never produced"));
    }
  }
  return order;
}

std::vector<std::string> Graph::OuterScopeValues() const {
  std::set<std::string> defined(declared_inputs_.begin(), declared_inputs_.end());
  for (const auto& [name, t] : initializers_) defined.insert(name);
  for (const auto& n : nodes_) {
    if (!n) continue;
    for (const auto& o : n->outputs) defined.insert(o);
  }
  std::set<std::string> outer;
  auto use = [&](const std::string& v) {
    if (!v.empty() && !defined.count(v)) outer.insert(v);
  };
  for (const auto& n : nodes_) {
    if (!n) continue;
    for (const auto& i : n->inputs) use(i);
    for (const auto& [attr, sub] : n->subgraphs) {
      for (const auto& v : sub->OuterScopeValues()) use(v);
    }
  }
  for (const auto& o : outputs_) use(o);
  return {outer.begin(), outer.end()};
}

std::string Graph::UniqueValueName(const std::string& hint) {
  while (true) {
    std::string candidate = absl::StrCat(hint, "_onyx", unique_counter_++);
    if (!DefinesValue(candidate) && !value_infos_.count(candidate)) return candidate;
  }
}

void Graph::ToProto(onnx::GraphProto* proto, int64_t max_initializer_bytes) const {
  proto->set_name(name_);
  if (!doc_string_.empty()) proto->set_doc_string(doc_string_);
  auto order = TopologicalOrder();
  std::vector<Node*> nodes = order.ok() ? *order : Nodes();
  for (const Node* n : nodes) {
    auto* np = proto->add_node();
    np->set_name(n->name);
    np->set_op_type(n->op_type);
    if (!n->domain.empty()) np->set_domain(n->domain);
    for (const auto& i : n->inputs) np->add_input(i);
    for (const auto& o : n->outputs) np->add_output(o);
    for (const auto& [attr_name, attr] : n->attributes) {
      auto* ap = np->add_attribute();
      *ap = attr;
      auto sub = n->subgraphs.find(attr_name);
      // Subgraphs keep every initializer: a Loop or If body's inputs are its
      // formal parameters, which typed inputs for its weights would change.
      if (sub != n->subgraphs.end()) sub->second->ToProto(ap->mutable_g());
    }
  }
  for (const auto& [name, t] : initializers_) {
    if (max_initializer_bytes >= 0 && static_cast<int64_t>(t.byte_size()) > max_initializer_bytes) {
      if (std::find(declared_inputs_.begin(), declared_inputs_.end(), name) != declared_inputs_.end()) continue;
      ValueInfo info;
      info.type = t.type();
      info.has_shape = true;
      info.dims.assign(t.dims().begin(), t.dims().end());
      onnx::ValueInfoProto* vi = proto->add_input();
      vi->set_name(name);
      ValueInfoToTypeProto(info, vi->mutable_type());
    } else {
      *proto->add_initializer() = TensorToProto(t, name);
    }
  }
  std::set<std::string> io;
  auto add_value_info = [&](const std::string& name, onnx::ValueInfoProto* vi) {
    vi->set_name(name);
    auto it = value_infos_.find(name);
    if (it != value_infos_.end()) ValueInfoToTypeProto(it->second, vi->mutable_type());
    io.insert(name);
  };
  for (const auto& i : declared_inputs_) add_value_info(i, proto->add_input());
  for (const auto& o : outputs_) add_value_info(o, proto->add_output());
  for (const auto& [name, info] : value_infos_) {
    if (io.count(name) || initializers_.count(name)) continue;
    ValueInfoToTypeProto(info, proto->add_value_info()->mutable_type());
    proto->mutable_value_info(proto->value_info_size() - 1)->set_name(name);
  }
}

}  // namespace onyx
