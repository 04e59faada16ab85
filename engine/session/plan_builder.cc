#include "session/plan_builder.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"
#include "onyx/status_macros.h"
#include "planner/lane_assignment.h"
#include "planner/lifetime.h"

namespace onyx {
namespace {

// Counts, per initializer, the readers that have not yet said they keep a
// packed copy of it; an initializer some reader needs is never released.
class PackedConstantRelease {
 public:
  explicit PackedConstantRelease(const Graph& graph) {
    std::set<std::string> kept(graph.outputs().begin(), graph.outputs().end());
    kept.insert(graph.declared_inputs().begin(), graph.declared_inputs().end());
    for (const Node* n : graph.Nodes()) {
      for (const auto& [attr, sub] : n->subgraphs) {
        for (const auto& v : sub->OuterScopeValues()) kept.insert(v);
      }
    }
    for (const auto& [name, tensor] : graph.initializers()) {
      if (!kept.count(name) && tensor.raw() != nullptr) pending_[name] = 0;
    }
    for (const Node* n : graph.Nodes()) {
      for (const auto& in : n->inputs) {
        auto it = pending_.find(in);
        if (it != pending_.end()) ++it->second;
      }
    }
  }

  // `node`'s kernel exists: the initializers it was the last reader of, all
  // of whose readers packed them.
  std::vector<std::string> KernelCreated(const Node& node, const OpKernel& kernel) {
    const std::vector<int> packed = kernel.PackedConstantInputs();
    std::vector<std::string> released;
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
      auto it = pending_.find(node.inputs[i]);
      if (it == pending_.end()) continue;
      if (std::find(packed.begin(), packed.end(), i) == packed.end()) {
        pending_.erase(it);  // this reader needs the bytes
        continue;
      }
      if (--it->second == 0) {
        released.push_back(it->first);
        pending_.erase(it);
      }
    }
    return released;
  }

 private:
  std::map<std::string, int> pending_;  // initializer -> readers yet to pack it
};

}  // namespace

absl::StatusOr<std::unique_ptr<ExecutionPlan>> BuildExecutionPlan(
    Graph& graph, const std::vector<const IExecutionProvider*>& providers,
    const std::map<std::string, int>* parent_slots, bool release_packed_constants) {
  auto plan = std::make_unique<ExecutionPlan>();
  auto slot = [&](const std::string& name) -> int {
    if (name.empty()) return -1;
    auto it = plan->slot_of.find(name);
    if (it != plan->slot_of.end()) return it->second;
    int s = plan->num_slots();
    plan->slot_names.push_back(name);
    plan->slot_of[name] = s;
    return s;
  };
  for (const auto& name : graph.declared_inputs()) {
    plan->feed_slots.push_back(slot(name));
    plan->feed_names.push_back(name);
  }
  for (const auto& [name, tensor] : graph.initializers()) slot(name);
  std::optional<PackedConstantRelease> releaser;
  if (release_packed_constants) releaser.emplace(graph);
  for (const auto& name : graph.OuterScopeValues()) {
    auto parent = parent_slots == nullptr ? nullptr : &*parent_slots;
    auto it = parent == nullptr ? std::map<std::string, int>::const_iterator() : parent->find(name);
    if (parent == nullptr || it == parent->end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("graph '", graph.name(), "' reads '", name, "', which no enclosing graph defines"));
    }
    plan->outer_scope.emplace_back(slot(name), it->second);
  }

  ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  for (const Node* node : order) {
    const IExecutionProvider* provider = nullptr;
    for (const auto* p : providers) {
      if (p->name() == node->provider) provider = p;
    }
    if (provider == nullptr) {
      return absl::InternalError(
          absl::StrCat(node->Label(), " is assigned to unknown provider '", node->provider, "'"));
    }
    ASSIGN_OR_RETURN(const KernelRegistry::Entry* entry, provider->kernel_registry().Lookup(*node, graph));
    const onnx::OpSchema* schema = nullptr;
    int64_t opset = node->since_version > 0 ? node->since_version : graph.OpsetFor(node->domain);
    if (opset > 0) schema = onnx::OpSchemaRegistry::Schema(node->op_type, static_cast<int>(opset), node->domain);
    NodeRuntime rt;
    for (const auto& [attr, sub] : node->subgraphs) {
      for (const auto& name : sub->OuterScopeValues()) rt.implicit_inputs.push_back(slot(name));
    }
    for (const auto& [attr, sub] : node->subgraphs) {
      auto subplan = BuildExecutionPlan(*sub, providers, &plan->slot_of);
      if (!subplan.ok()) {
        return absl::Status(subplan.status().code(),
                            absl::StrCat(node->Label(), " attribute '", attr, "': ", subplan.status().message()));
      }
      rt.subplans[attr] = *std::move(subplan);
    }
    OpKernelInfo info(*node, graph, schema, provider, &rt.subplans);
    auto kernel = entry->factory(info);
    if (!kernel.ok()) {
      std::string label = node->Label();
      std::string message(kernel.status().message());
      if (message.rfind(label, 0) != 0) message = absl::StrCat(label, ": ", message);
      return absl::Status(kernel.status().code(), message);
    }
    if (releaser) {
      for (const std::string& name : releaser->KernelCreated(*node, **kernel)) {
        const Tensor& bytes = *graph.FindInitializer(name);
        ++plan->released_constants;
        plan->released_constant_bytes += static_cast<int64_t>(bytes.byte_size());
        graph.SetInitializer(name, Tensor::Wrap(bytes.type(), bytes.dims(), nullptr));
      }
    }
    rt.node = node;
    rt.kernel = *std::move(kernel);
    rt.provider = node->provider;
    rt.arena = provider->arena();
    rt.may_inplace = entry->def.may_inplace;
    for (const auto& in : node->inputs) rt.inputs.push_back(slot(in));
    for (const auto& out : node->outputs) rt.outputs.push_back(slot(out));
    plan->nodes.push_back(std::move(rt));
  }
  for (const auto& [name, tensor] : graph.initializers()) plan->constants.emplace_back(slot(name), tensor);
  for (const auto& name : graph.outputs()) {
    plan->output_slots.push_back(slot(name));
    plan->output_names.push_back(name);
  }

  std::vector<NodeSlots> slots;
  for (const auto& rt : plan->nodes) {
    NodeSlots ns{rt.inputs, rt.outputs};
    ns.inputs.insert(ns.inputs.end(), rt.implicit_inputs.begin(), rt.implicit_inputs.end());
    slots.push_back(std::move(ns));
  }
  std::vector<int> keep = plan->output_slots;
  for (const auto& [s, t] : plan->constants) keep.push_back(s);
  auto release = ComputeReleasePoints(slots, plan->num_slots(), keep);
  for (size_t i = 0; i < plan->nodes.size(); ++i) plan->nodes[i].release_after = std::move(release[i]);
  return plan;
}

}  // namespace onyx

namespace onyx {

void AssignPlanLanes(ExecutionPlan& plan, int cpu_lanes, const std::vector<std::string>& stream_providers) {
  const int n = static_cast<int>(plan.nodes.size());
  std::vector<int> producer_of(plan.num_slots(), -1);
  std::vector<LaneNode> nodes(n);
  std::vector<std::vector<int>> reads(n);
  for (int i = 0; i < n; ++i) {
    const NodeRuntime& rt = plan.nodes[i];
    nodes[i].provider = rt.provider;
    nodes[i].has_stream =
        std::find(stream_providers.begin(), stream_providers.end(), rt.provider) != stream_providers.end();
    for (int s : rt.inputs) {
      if (s >= 0) reads[i].push_back(s);
    }
    for (int s : rt.implicit_inputs) reads[i].push_back(s);
    for (int s : reads[i]) {
      if (producer_of[s] >= 0) nodes[i].producers.push_back(producer_of[s]);
    }
    for (int s : rt.outputs) {
      if (s >= 0) producer_of[s] = i;
    }
  }
  LaneAssignment lanes = AssignLanes(nodes, cpu_lanes);
  if (lanes.lane_provider.size() <= 1) return;
  plan.lane_provider = lanes.lane_provider;
  plan.lane_nodes.assign(lanes.lane_provider.size(), {});
  for (int i = 0; i < n; ++i) plan.lane_nodes[lanes.lane_of[i]].push_back(i);
  plan.cross_lane_producers.assign(n, 0);
  plan.cross_lane_consumers.assign(n, {});
  for (int i = 0; i < n; ++i) {
    std::set<int> producers(nodes[i].producers.begin(), nodes[i].producers.end());
    for (int p : producers) {
      if (lanes.lane_of[p] == lanes.lane_of[i]) continue;
      ++plan.cross_lane_producers[i];
      plan.cross_lane_consumers[p].push_back(i);
    }
  }
  // Readers per slot: a slot is released when its last reader, on any lane, is done.
  plan.readers.assign(plan.num_slots(), 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> unique(reads[i].begin(), reads[i].end());
    for (int s : unique) ++plan.readers[s];
  }
  for (int s : plan.output_slots) plan.readers[s] = -1;
  for (const auto& [s, t] : plan.constants) plan.readers[s] = -1;
}

}  // namespace onyx
