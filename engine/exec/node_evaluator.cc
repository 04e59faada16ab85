#include "exec/node_evaluator.h"

#include "exec/execution_frame.h"
#include "exec/executor.h"
#include "onnx/defs/schema.h"

namespace onyx {

std::vector<Value> EvaluateConstantNode(const IExecutionProvider& provider, const Graph& graph, const Node& node) {
  auto entry = provider.kernel_registry().Lookup(node, graph);
  if (!entry.ok()) return {};
  const onnx::OpSchema* schema =
      node.since_version > 0 ? onnx::OpSchemaRegistry::Schema(node.op_type, node.since_version, node.domain) : nullptr;
  OpKernelInfo info(node, graph, schema, &provider);
  auto kernel = (*entry)->factory(info);
  if (!kernel.ok()) return {};
  ExecutionPlan plan;
  // One thread: folding runs once, on the thread creating the session, and a
  // parallel region would leave an OpenMP team on that thread for its life
  // (teams idling beside the ones that run requests make libgomp stop
  // spinning).
  plan.intra_op_threads = 1;
  NodeRuntime rt;
  rt.node = &node;
  rt.kernel = *std::move(kernel);
  for (const auto& in : node.inputs) {
    if (in.empty()) {
      rt.inputs.push_back(-1);
      continue;
    }
    int slot = plan.num_slots();
    plan.slot_names.push_back(in);
    plan.constants.emplace_back(slot, *graph.FindInitializer(in));
    rt.inputs.push_back(slot);
  }
  for (const auto& out : node.outputs) {
    if (out.empty()) {
      rt.outputs.push_back(-1);
      continue;
    }
    rt.outputs.push_back(plan.num_slots());
    plan.output_slots.push_back(plan.num_slots());
    plan.slot_names.push_back(out);
  }
  plan.nodes.push_back(std::move(rt));
  RunOptions options;
  ExecutionFrame frame(plan, options);
  if (!ExecutePlan(frame).ok()) return {};
  std::vector<Value> outputs;
  for (int slot : plan.output_slots) outputs.push_back(frame.value(slot));
  return outputs;
}

}  // namespace onyx
