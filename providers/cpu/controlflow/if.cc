// If: runs then_branch or else_branch and forwards its outputs.
#include "onyx/status_macros.h"
#include "framework/op_kernel.h"
#include "providers/cpu/controlflow/controlflow_kernels.h"

namespace onyx {
namespace {

class If final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const ExecutionPlan* then_plan = info.SubgraphPlan("then_branch");
    const ExecutionPlan* else_plan = info.SubgraphPlan("else_branch");
    if (then_plan == nullptr || else_plan == nullptr) {
      return info.Error("needs both 'then_branch' and 'else_branch' graph attributes");
    }
    return std::unique_ptr<OpKernel>(new If(then_plan, else_plan));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* cond = ctx.Input(0);
    if (cond == nullptr || cond->num_elements() != 1 || cond->type() != DataType::kBool) {
      return ctx.Error("input 'cond' must be a bool tensor with one element");
    }
    const ExecutionPlan& branch = *cond->data<bool>() ? *then_plan_ : *else_plan_;
    std::vector<Value> outputs;
    RETURN_IF_ERROR(ctx.RunSubgraph(branch, {}, &outputs));
    if (static_cast<int>(outputs.size()) != ctx.OutputCount()) {
      return ctx.Error(absl::StrCat("branch produced ", outputs.size(), " outputs, the node has ",
                                    ctx.OutputCount()));
    }
    for (size_t i = 0; i < outputs.size(); ++i) ctx.SetOutput(static_cast<int>(i), std::move(outputs[i]));
    return absl::OkStatus();
  }

 private:
  If(const ExecutionPlan* then_plan, const ExecutionPlan* else_plan) : then_plan_(then_plan), else_plan_(else_plan) {}
  const ExecutionPlan* then_plan_;
  const ExecutionPlan* else_plan_;
};

}  // namespace

void RegisterIfKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("If").Since(1).Build(), MakeFactory<If>());
}

}  // namespace onyx
