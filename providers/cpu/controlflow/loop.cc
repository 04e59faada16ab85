// Loop: runs `body` while the trip count and condition allow, threading the
// loop-carried values and stacking the scan outputs along a new axis 0.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/controlflow/controlflow_kernels.h"
#include "providers/cpu/controlflow/stacking.h"

namespace onyx {
namespace {

class Loop final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const ExecutionPlan* body = info.SubgraphPlan("body");
    const Graph* graph = info.Subgraph("body");
    if (body == nullptr || graph == nullptr) return info.Error("needs a 'body' graph attribute");
    const int carried = info.InputCount() - 2;
    if (carried < 0 || static_cast<int>(graph->declared_inputs().size()) != carried + 2) {
      return info.Error(absl::StrCat("body takes ", graph->declared_inputs().size(),
                                     " inputs, expected 2 + ", std::max(carried, 0), " loop-carried values"));
    }
    const int scans = static_cast<int>(graph->outputs().size()) - 1 - carried;
    if (scans < 0 || info.OutputCount() > carried + scans) {
      return info.Error(absl::StrCat("body has ", graph->outputs().size(), " outputs for ", carried,
                                     " loop-carried values"));
    }
    auto kernel = std::unique_ptr<Loop>(new Loop(body, carried, scans));
    for (int k = 0; k < scans; ++k) {
      const ValueInfo* vi = graph->FindValueInfo(graph->outputs()[1 + carried + k]);
      kernel->scan_types_.push_back(vi ? vi->type : DataType::kFloat);
      Dims dims;
      if (vi && vi->has_shape) {
        for (int64_t d : vi->dims) dims.push_back(std::max<int64_t>(d, 0));
      }
      kernel->scan_dims_.push_back(dims);
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    int64_t max_trips = INT64_MAX;
    if (const Tensor* m = ctx.Input(0)) {
      if (m->num_elements() != 1 || m->type() != DataType::kInt64) {
        return ctx.Error("input 'M' must be an int64 tensor with one element");
      }
      max_trips = *m->data<int64_t>();
    }
    const Tensor* cond_in = ctx.Input(1);
    bool cond = true;
    if (cond_in != nullptr) {
      if (cond_in->num_elements() != 1 || cond_in->type() != DataType::kBool) {
        return ctx.Error("input 'cond' must be a bool tensor with one element");
      }
      cond = *cond_in->data<bool>();
    }
    std::vector<Value> carried(carried_);
    for (int i = 0; i < carried_; ++i) {
      const Value* v = ctx.InputValue(2 + i);
      carried[i] = v ? *v : Value();
    }
    std::vector<std::vector<Tensor>> scan_slices(scans_);
    std::vector<Value> inputs(2 + carried_), outputs;
    for (int64_t iter = 0; iter < max_trips && cond; ++iter) {
      Tensor iteration = Tensor::Allocate(DataType::kInt64, {});
      *iteration.mutable_data<int64_t>() = iter;
      Tensor cond_tensor = Tensor::Allocate(DataType::kBool, {});
      *cond_tensor.mutable_data<bool>() = cond;
      inputs[0] = Value(iteration);
      inputs[1] = Value(cond_tensor);
      for (int i = 0; i < carried_; ++i) inputs[2 + i] = std::move(carried[i]);
      RETURN_IF_ERROR(ctx.RunSubgraph(*body_, inputs, &outputs));
      if (cond_in != nullptr) {
        const Value& c = outputs[0];
        if (!c.is_tensor() || c.tensor().num_elements() != 1 || c.tensor().type() != DataType::kBool) {
          return ctx.Error("body output 'cond' must be a bool tensor with one element");
        }
        cond = *c.tensor().data<bool>();
      }
      for (int i = 0; i < carried_; ++i) carried[i] = std::move(outputs[1 + i]);
      for (int k = 0; k < scans_; ++k) {
        const Value& v = outputs[1 + carried_ + k];
        if (!v.is_tensor()) return ctx.Error(absl::StrCat("scan output ", k, " is not a tensor"));
        scan_slices[k].push_back(v.tensor());
      }
    }
    for (int i = 0; i < carried_ && i < ctx.OutputCount(); ++i) ctx.SetOutput(i, std::move(carried[i]));
    for (int k = 0; k < scans_ && carried_ + k < ctx.OutputCount(); ++k) {
      auto stacked = StackAlongAxis(scan_slices[k], 0, false, scan_types_[k], scan_dims_[k]);
      if (!stacked.ok()) return ctx.Error(stacked.status().message());
      ctx.SetOutput(carried_ + k, Value(*std::move(stacked)));
    }
    return absl::OkStatus();
  }

 private:
  Loop(const ExecutionPlan* body, int carried, int scans) : body_(body), carried_(carried), scans_(scans) {}
  const ExecutionPlan* body_;
  int carried_;
  int scans_;
  std::vector<DataType> scan_types_;
  std::vector<Dims> scan_dims_;
};

}  // namespace

void RegisterLoopKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Loop").Since(1).Build(), MakeFactory<Loop>());
}

}  // namespace onyx
