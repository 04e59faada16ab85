// The engine's graph IR: nodes, typed values, initializers and opset imports,
// built from an ONNX GraphProto and written back to one.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, Graph::FromProto(model.graph(), opsets, dir));
//   for (Node* n : g->TopologicalOrder()) { ... }
//
// Values are named (ONNX semantics); "" marks an omitted optional input/output.
// Nodes are owned by the graph; removing a node leaves a hole so indices stay
// stable for the passes that hold them. Subgraphs (If/Loop/Scan bodies) are
// owned by their node and see the enclosing graph through parent().
// Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "onyx/tensor.h"
#include "onyx/value_info.h"

namespace onyx {

class Graph;

class Node {
 public:
  size_t index = 0;
  std::string name;
  std::string op_type;
  std::string domain;     // "" is the default ONNX domain
  int since_version = 0;  // of the schema resolved for the model's opset (0 if none)
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, onnx::AttributeProto> attributes;
  std::map<std::string, std::unique_ptr<Graph>> subgraphs;  // by attribute name
  std::string provider;                                     // assigned by the partitioner

  // "Conv 'conv1'" or "Conv #3" for unnamed nodes: used in every error message.
  std::string Label() const;
  const onnx::AttributeProto* FindAttribute(const std::string& attr) const;
};

class Graph {
 public:
  // Builds the IR. `opsets` maps domain -> version (from the model, inherited by
  // subgraphs); `base_dir` resolves external-data initializers.
  static absl::StatusOr<std::unique_ptr<Graph>> FromProto(const onnx::GraphProto& proto,
                                                          const std::map<std::string, int64_t>& opsets,
                                                          const std::string& base_dir, const Graph* parent = nullptr);
  // The same, moving initializer bytes out of `proto` instead of copying them.
  static absl::StatusOr<std::unique_ptr<Graph>> TakeFromProto(onnx::GraphProto* proto,
                                                              const std::map<std::string, int64_t>& opsets,
                                                              const std::string& base_dir);
  // Writes the graph (with subgraphs) back as a GraphProto. This graph's
  // initializers larger than `max_initializer_bytes` (when >= 0) are written
  // as typed graph inputs without their data: enough for shape inference,
  // which reads the values of small shape-like tensors only, without copying
  // the weights. Subgraphs are written whole.
  void ToProto(onnx::GraphProto* proto, int64_t max_initializer_bytes = -1) const;

  const std::string& name() const { return name_; }
  const Graph* parent() const { return parent_; }
  const std::map<std::string, int64_t>& opsets() const { return opsets_; }
  int64_t OpsetFor(const std::string& domain) const;

  // Graph inputs that must be fed (declared inputs without an initializer), and
  // every declared input (ONNX lets initializers be overridden by feeds).
  const std::vector<std::string>& inputs() const { return inputs_; }
  const std::vector<std::string>& declared_inputs() const { return declared_inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  std::vector<std::string>& mutable_outputs() { return outputs_; }

  const std::map<std::string, Tensor>& initializers() const { return initializers_; }
  const Tensor* FindInitializer(const std::string& value) const;
  void SetInitializer(const std::string& value, Tensor tensor);
  void RemoveInitializer(const std::string& value);

  // Type and shape of a value when known (from the model or shape inference).
  const ValueInfo* FindValueInfo(const std::string& value) const;
  void SetValueInfo(const std::string& value, ValueInfo info);

  // Live nodes in insertion order (holes skipped).
  std::vector<Node*> Nodes() const;
  size_t NodeCapacity() const { return nodes_.size(); }
  Node* node(size_t index) const { return nodes_[index].get(); }
  Node* AddNode(std::unique_ptr<Node> node);
  void RemoveNode(size_t index);

  // The live node producing `value`, or nullptr (inputs, initializers, outer scope).
  Node* Producer(const std::string& value) const;
  std::vector<Node*> Consumers(const std::string& value) const;
  // True when `value` is a graph output of this graph.
  bool IsOutput(const std::string& value) const;

  // Kahn order of the live nodes; FAILED_PRECONDITION naming a node on a cycle or
  // a value nobody produces.
  absl::StatusOr<std::vector<Node*>> TopologicalOrder() const;
  // Names of values used in this graph (or its subgraphs) but defined in none of
  // them: they come from enclosing scopes.
  std::vector<std::string> OuterScopeValues() const;
  // A value name unused in this graph, starting with `hint`.
  std::string UniqueValueName(const std::string& hint);

 private:
  Graph() = default;
  bool DefinesValue(const std::string& value) const;

  std::string name_;
  const Graph* parent_ = nullptr;
  std::map<std::string, int64_t> opsets_;
  std::vector<std::string> inputs_;
  std::vector<std::string> declared_inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, Tensor> initializers_;
  std::map<std::string, ValueInfo> value_infos_;
  std::vector<std::unique_ptr<Node>> nodes_;
  int64_t unique_counter_ = 0;
  std::string doc_string_;
};

// Converts an ONNX TypeProto into the public ValueInfo form.
ValueInfo ValueInfoFromTypeProto(const std::string& name, const onnx::TypeProto& type);
void ValueInfoToTypeProto(const ValueInfo& info, onnx::TypeProto* type);

}  // namespace onyx
