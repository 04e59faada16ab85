// OpKernel: one node's computation, created once at session initialisation.
//
//   class Relu final : public OpKernel {
//    public:
//     absl::Status Compute(OpKernelContext& ctx) const override {
//       const Tensor& x = *ctx.Input(0);
//       ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), x.type()));
//       ...
//     }
//   };
//
// OpKernelInfo is what a kernel factory sees: the node's attributes (with the
// defaults of the ONNX schema), input/output types and constant inputs.
// OpKernelContext is what Compute sees for one run: input values and output
// allocation. Compute must be thread-safe: one kernel serves concurrent runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "onyx/tensor.h"

namespace onnx {
class OpSchema;
}

namespace onyx {

class IExecutionProvider;
// A compiled subgraph (If/Loop/Scan body): opaque to kernels, which only hand
// it back to OpKernelContext::RunSubgraph. Defined by the executor (exec/).
struct ExecutionPlan;

class OpKernelInfo {
 public:
  OpKernelInfo(const Node& node, const Graph& graph, const onnx::OpSchema* schema, const IExecutionProvider* provider,
               const std::map<std::string, std::unique_ptr<ExecutionPlan>>* subplans = nullptr)
      : node_(node), graph_(graph), schema_(schema), provider_(provider), subplans_(subplans) {}

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  const onnx::OpSchema* schema() const { return schema_; }
  const IExecutionProvider* provider() const { return provider_; }

  bool HasAttr(const std::string& name) const;
  // Value of an attribute, or the schema's default, or NOT_FOUND naming node and
  // attribute. T: int64_t, float, std::string, std::vector<int64_t>,
  // std::vector<float>, std::vector<std::string>, Tensor.
  template <typename T>
  absl::StatusOr<T> Attr(const std::string& name) const;
  // Like Attr but falls back to `fallback` when absent with no schema default.
  template <typename T>
  T AttrOr(const std::string& name, T fallback) const {
    auto v = Attr<T>(name);
    return v.ok() ? *std::move(v) : fallback;
  }

  int InputCount() const { return static_cast<int>(node_.inputs.size()); }
  int OutputCount() const { return static_cast<int>(node_.outputs.size()); }
  bool HasInput(int i) const { return i < InputCount() && !node_.inputs[i].empty(); }
  // Element type of input/output i when known (kUndefined otherwise).
  DataType InputType(int i) const;
  DataType OutputType(int i) const;
  const ValueInfo* InputInfo(int i) const;
  // The initializer feeding input i, or nullptr when it is computed at run time.
  const Tensor* ConstantInput(int i) const;
  // Subgraph attribute (If/Loop/Scan bodies), nullptr if absent.
  const Graph* Subgraph(const std::string& attr) const;
  // The compiled plan of that subgraph, for OpKernelContext::RunSubgraph.
  const ExecutionPlan* SubgraphPlan(const std::string& attr) const;

  // An INVALID_ARGUMENT status prefixed with the node's label.
  absl::Status Error(absl::string_view message) const;

 private:
  const onnx::AttributeProto* FindAttrOrDefault(const std::string& name) const;

  const Node& node_;
  const Graph& graph_;
  const onnx::OpSchema* schema_;
  const IExecutionProvider* provider_;
  const std::map<std::string, std::unique_ptr<ExecutionPlan>>* subplans_;
};

// What Compute sees for one run of its node: the node's input values and the
// allocation of its outputs. An interface so that the framework layer does not
// depend on how a run stores its values: the executor (exec/) implements it
// over its execution frame, and tests may implement it over plain vectors.
// Valid for one Compute call only; not thread-safe.
class OpKernelContext {
 public:
  virtual ~OpKernelContext() = default;

  virtual int InputCount() const = 0;
  // nullptr when the input is omitted or is not a tensor.
  const Tensor* Input(int i) const {
    const Value* v = InputValue(i);
    return (v != nullptr && v->is_tensor()) ? &v->tensor() : nullptr;
  }
  // nullptr when the input is omitted.
  virtual const Value* InputValue(int i) const = 0;
  virtual int OutputCount() const = 0;
  virtual bool OutputRequested(int i) const = 0;
  // Allocates output i (row-major, zero-filled in host-accessible memory;
  // device memory is left as it is: device kernels use OutputForOverwrite
  // and write every element). RESOURCE_EXHAUSTED when the
  // arena's cap is reached; INVALID_ARGUMENT for a negative dimension. An
  // omitted optional output gets scratch memory the kernel may write into.
  absl::StatusOr<Tensor*> Output(int i, absl::Span<const int64_t> dims, DataType type) {
    return AllocateOutput(i, dims, type, /*zero_fill=*/true);
  }
  // As Output, with the contents left as they are: only for kernels that
  // write every element of the output, which then skip a pass over memory.
  absl::StatusOr<Tensor*> OutputForOverwrite(int i, absl::Span<const int64_t> dims, DataType type) {
    return AllocateOutput(i, dims, type, /*zero_fill=*/false);
  }
  // Sets output i to an existing value (sequences, views sharing input memory).
  virtual void SetOutput(int i, Value value) = 0;
  // Output i as already set or allocated by this node (nullptr if not yet).
  virtual Tensor* OutputTensor(int i) = 0;

  virtual const Node& node() const = 0;
  // An INVALID_ARGUMENT status prefixed with the node's label.
  absl::Status Error(absl::string_view message) const;
  // Runs a subgraph of this node (from OpKernelInfo::SubgraphPlan) with `inputs`
  // bound to its graph inputs in order and the enclosing values it reads taken
  // from this run; fills `outputs` in graph output order.
  virtual absl::Status RunSubgraph(const ExecutionPlan& plan, const std::vector<Value>& inputs,
                                   std::vector<Value>* outputs) = 0;

 protected:
  // Output and OutputForOverwrite.
  virtual absl::StatusOr<Tensor*> AllocateOutput(int i, absl::Span<const int64_t> dims, DataType type,
                                                 bool zero_fill) = 0;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual absl::Status Compute(OpKernelContext& ctx) const = 0;
  // Constant inputs (by index) that the kernel copied into a form of its own
  // when it was created and whose bytes it never reads again: Compute sees
  // their type and dims only. When every reader of an initializer says so,
  // the session may release its bytes (session/plan_builder.h).
  virtual std::vector<int> PackedConstantInputs() const { return {}; }
};

using KernelFactory = std::function<absl::StatusOr<std::unique_ptr<OpKernel>>(const OpKernelInfo&)>;

// Factory for kernels constructible as K(const OpKernelInfo&) that cannot fail,
// or that report errors through a static Create(info).
template <typename K>
KernelFactory MakeFactory() {
  return [](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    if constexpr (requires { K::Create(info); }) {
      return K::Create(info);
    } else {
      return std::unique_ptr<OpKernel>(new K(info));
    }
  };
}

}  // namespace onyx
