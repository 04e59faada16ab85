// SequenceMap: applies `body` to each position of the input sequences; tensor
// inputs are passed whole to every iteration; each body output is collected
// into an output sequence.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/controlflow/controlflow_kernels.h"

namespace onyx {
namespace {

class SequenceMap final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const ExecutionPlan* body = info.SubgraphPlan("body");
    const Graph* graph = info.Subgraph("body");
    if (body == nullptr || graph == nullptr) return info.Error("needs a 'body' graph attribute");
    if (static_cast<int>(graph->declared_inputs().size()) != info.InputCount() ||
        static_cast<int>(graph->outputs().size()) != info.OutputCount()) {
      return info.Error(absl::StrCat("body takes ", graph->declared_inputs().size(), " inputs and gives ",
                                     graph->outputs().size(), " outputs; the node has ", info.InputCount(),
                                     " and ", info.OutputCount()));
    }
    std::vector<DataType> types;
    for (int k = 0; k < info.OutputCount(); ++k) {
      const ValueInfo* vi = graph->FindValueInfo(graph->outputs()[k]);
      types.push_back(vi ? vi->type : DataType::kUndefined);
    }
    return std::unique_ptr<OpKernel>(new SequenceMap(body, std::move(types)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Value* first = ctx.InputValue(0);
    if (first == nullptr || !first->is_sequence()) return ctx.Error("input 0 must be a sequence");
    const size_t length = first->sequence().size();
    for (int i = 1; i < ctx.InputCount(); ++i) {
      const Value* v = ctx.InputValue(i);
      if (v != nullptr && v->is_sequence() && v->sequence().size() != length) {
        return ctx.Error(absl::StrCat("input ", i, " has ", v->sequence().size(), " elements, input 0 has ", length));
      }
    }
    std::vector<std::vector<Tensor>> collected(ctx.OutputCount());
    std::vector<Value> inputs(ctx.InputCount()), outputs;
    for (size_t pos = 0; pos < length; ++pos) {
      for (int i = 0; i < ctx.InputCount(); ++i) {
        const Value* v = ctx.InputValue(i);
        inputs[i] = v == nullptr ? Value() : v->is_sequence() ? Value(v->sequence()[pos]) : *v;
      }
      RETURN_IF_ERROR(ctx.RunSubgraph(*body_, inputs, &outputs));
      for (int k = 0; k < ctx.OutputCount(); ++k) {
        if (!outputs[k].is_tensor()) return ctx.Error(absl::StrCat("body output ", k, " is not a tensor"));
        collected[k].push_back(outputs[k].tensor());
      }
    }
    for (int k = 0; k < ctx.OutputCount(); ++k) {
      DataType type = !collected[k].empty() ? collected[k][0].type() : types_[k];
      ctx.SetOutput(k, Value::Sequence(type, std::move(collected[k])));
    }
    return absl::OkStatus();
  }

 private:
  SequenceMap(const ExecutionPlan* body, std::vector<DataType> types) : body_(body), types_(std::move(types)) {}
  const ExecutionPlan* body_;
  std::vector<DataType> types_;
};

}  // namespace

void RegisterSequenceMapKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("SequenceMap").Since(17).Build(), MakeFactory<SequenceMap>());
}

}  // namespace onyx
