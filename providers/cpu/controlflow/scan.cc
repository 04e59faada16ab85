// Scan: iterates `body` over slices of the scan inputs, threading state
// variables and stacking the per-iteration scan outputs. Opset 9+ semantics
// (axes and directions per input/output); opset 8's leading batch axis is
// handled by scanning each batch entry separately.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/controlflow/controlflow_kernels.h"
#include "providers/cpu/controlflow/stacking.h"

namespace onyx {
namespace {

class Scan final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const ExecutionPlan* body = info.SubgraphPlan("body");
    const Graph* graph = info.Subgraph("body");
    if (body == nullptr || graph == nullptr) return info.Error("needs a 'body' graph attribute");
    auto scan_inputs = info.Attr<int64_t>("num_scan_inputs");
    if (!scan_inputs.ok()) return scan_inputs.status();
    auto kernel = std::unique_ptr<Scan>(new Scan());
    kernel->body_ = body;
    kernel->opset8_ = info.node().since_version < 9;
    kernel->num_scan_inputs_ = static_cast<int>(*scan_inputs);
    const int first_state = kernel->opset8_ ? 1 : 0;
    kernel->num_states_ = info.InputCount() - first_state - kernel->num_scan_inputs_;
    kernel->num_scan_outputs_ = static_cast<int>(graph->outputs().size()) - kernel->num_states_;
    if (kernel->num_states_ < 0 || kernel->num_scan_outputs_ < 0 ||
        static_cast<int>(graph->declared_inputs().size()) != kernel->num_states_ + kernel->num_scan_inputs_) {
      return info.Error(absl::StrCat("body signature (", graph->declared_inputs().size(), " inputs, ",
                                     graph->outputs().size(), " outputs) does not match ", info.InputCount(),
                                     " node inputs with num_scan_inputs=", *scan_inputs));
    }
    auto fill = [](std::vector<int64_t> v, int n) {
      if (v.empty()) v.assign(n, 0);
      return v;
    };
    if (kernel->opset8_) {
      kernel->input_directions_ = fill(info.AttrOr<std::vector<int64_t>>("directions", {}), kernel->num_scan_inputs_);
    } else {
      kernel->input_directions_ =
          fill(info.AttrOr<std::vector<int64_t>>("scan_input_directions", {}), kernel->num_scan_inputs_);
      kernel->input_axes_ = info.AttrOr<std::vector<int64_t>>("scan_input_axes", {});
      kernel->output_axes_ = info.AttrOr<std::vector<int64_t>>("scan_output_axes", {});
      kernel->output_directions_ = info.AttrOr<std::vector<int64_t>>("scan_output_directions", {});
    }
    kernel->input_axes_ = fill(kernel->input_axes_, kernel->num_scan_inputs_);
    kernel->output_axes_ = fill(kernel->output_axes_, kernel->num_scan_outputs_);
    kernel->output_directions_ = fill(kernel->output_directions_, kernel->num_scan_outputs_);
    if (static_cast<int>(kernel->input_axes_.size()) != kernel->num_scan_inputs_ ||
        static_cast<int>(kernel->input_directions_.size()) != kernel->num_scan_inputs_ ||
        static_cast<int>(kernel->output_axes_.size()) != kernel->num_scan_outputs_ ||
        static_cast<int>(kernel->output_directions_.size()) != kernel->num_scan_outputs_) {
      return info.Error("scan axes/directions attributes must have one entry per scan input/output");
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const int first_state = opset8_ ? 1 : 0;
    std::vector<Tensor> states, scans;
    for (int i = 0; i < num_states_; ++i) states.push_back(*ctx.Input(first_state + i));
    for (int i = 0; i < num_scan_inputs_; ++i) {
      const Tensor* t = ctx.Input(first_state + num_states_ + i);
      if (t == nullptr) return ctx.Error(absl::StrCat("scan input ", i, " is missing"));
      scans.push_back(*t);
    }
    if (!opset8_) {
      std::vector<Tensor> final_states, outputs;
      RETURN_IF_ERROR(ScanOnce(ctx, states, scans, &final_states, &outputs));
      for (int i = 0; i < num_states_; ++i) ctx.SetOutput(i, Value(final_states[i]));
      for (int k = 0; k < num_scan_outputs_; ++k) ctx.SetOutput(num_states_ + k, Value(outputs[k]));
      return absl::OkStatus();
    }
    if (const Tensor* lens = ctx.Input(0); lens != nullptr) {
      return ctx.Error("opset-8 Scan with sequence_lens is not supported");
    }
    // Opset 8: axis 0 of every input is a batch axis; scan each entry on axis 0.
    const int64_t batch = states.empty() ? scans[0].dims()[0] : states[0].dims()[0];
    std::vector<std::vector<Tensor>> per_output(num_states_ + num_scan_outputs_);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> s, x, final_states, outputs;
      for (const Tensor& t : states) s.push_back(TakeAlongAxis(t, 0, b));
      for (const Tensor& t : scans) x.push_back(TakeAlongAxis(t, 0, b));
      RETURN_IF_ERROR(ScanOnce(ctx, s, x, &final_states, &outputs));
      for (int i = 0; i < num_states_; ++i) per_output[i].push_back(final_states[i]);
      for (int k = 0; k < num_scan_outputs_; ++k) per_output[num_states_ + k].push_back(outputs[k]);
    }
    for (size_t i = 0; i < per_output.size(); ++i) {
      auto stacked = StackAlongAxis(per_output[i], 0, false, DataType::kFloat, {});
      if (!stacked.ok()) return ctx.Error(stacked.status().message());
      ctx.SetOutput(static_cast<int>(i), Value(*std::move(stacked)));
    }
    return absl::OkStatus();
  }

 private:
  Scan() = default;

  absl::Status ScanOnce(OpKernelContext& ctx, std::vector<Tensor> states, const std::vector<Tensor>& scans,
                        std::vector<Tensor>* final_states, std::vector<Tensor>* stacked) const {
    int64_t length = -1;
    std::vector<int64_t> axes(num_scan_inputs_);
    for (int i = 0; i < num_scan_inputs_; ++i) {
      int64_t axis = input_axes_[i] < 0 ? input_axes_[i] + scans[i].rank() : input_axes_[i];
      if (axis < 0 || axis >= scans[i].rank()) {
        return ctx.Error(absl::StrCat("scan_input_axes[", i, "] = ", input_axes_[i], " is out of range for rank ",
                                      scans[i].rank()));
      }
      axes[i] = axis;
      int64_t len = scans[i].dims()[axis];
      if (length >= 0 && len != length) {
        return ctx.Error(absl::StrCat("scan inputs disagree on sequence length: ", length, " vs ", len));
      }
      length = len;
    }
    if (length < 0) length = 0;
    std::vector<std::vector<Tensor>> slices(num_scan_outputs_);
    std::vector<Value> inputs(num_states_ + num_scan_inputs_), outputs;
    for (int64_t t = 0; t < length; ++t) {
      for (int i = 0; i < num_states_; ++i) inputs[i] = Value(states[i]);
      for (int i = 0; i < num_scan_inputs_; ++i) {
        int64_t index = input_directions_[i] == 1 ? length - 1 - t : t;
        inputs[num_states_ + i] = Value(TakeAlongAxis(scans[i], axes[i], index));
      }
      RETURN_IF_ERROR(ctx.RunSubgraph(*body_, inputs, &outputs));
      for (int i = 0; i < num_states_; ++i) states[i] = outputs[i].tensor();
      for (int k = 0; k < num_scan_outputs_; ++k) slices[k].push_back(outputs[num_states_ + k].tensor());
    }
    *final_states = std::move(states);
    stacked->clear();
    for (int k = 0; k < num_scan_outputs_; ++k) {
      int64_t rank = slices[k].empty() ? 0 : slices[k][0].rank();
      int64_t axis = output_axes_[k] < 0 ? output_axes_[k] + rank + 1 : output_axes_[k];
      auto s = StackAlongAxis(slices[k], axis, output_directions_[k] == 1, DataType::kFloat, {});
      if (!s.ok()) return ctx.Error(s.status().message());
      stacked->push_back(*std::move(s));
    }
    return absl::OkStatus();
  }

  const ExecutionPlan* body_ = nullptr;
  bool opset8_ = false;
  int num_scan_inputs_ = 0;
  int num_states_ = 0;
  int num_scan_outputs_ = 0;
  std::vector<int64_t> input_axes_, input_directions_, output_axes_, output_directions_;
};

}  // namespace

void RegisterScanKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Scan").Since(8).Build(), MakeFactory<Scan>());
}

}  // namespace onyx
