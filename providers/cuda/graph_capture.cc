#include "providers/cuda/graph_capture.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"

namespace onyx {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

absl::Status Refused(const std::string& reason) {
  return absl::FailedPreconditionError(absl::StrCat("CUDA graph capture refused: ", reason));
}

bool IsCopy(const Node& n, const char* op) { return n.domain == kOnyxDomain && n.op_type == op; }

std::string ShapeText(const ValueInfo& info) {
  std::vector<std::string> dims;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    const bool named = i < info.dim_params.size() && !info.dim_params[i].empty();
    dims.push_back(info.dims[i] >= 0 ? absl::StrCat(info.dims[i]) : (named ? info.dim_params[i] : "?"));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// "" when `value` has a static tensor shape, otherwise why not.
std::string DynamicShape(const Graph& graph, const std::string& value) {
  const ValueInfo* info = graph.FindValueInfo(value);
  if (info == nullptr || !info->has_shape) return "has no inferred shape";
  if (info->kind != ValueInfo::Kind::kTensor) return "is not a tensor";
  for (int64_t d : info->dims) {
    if (d < 0) return absl::StrCat("has a dynamic shape ", ShapeText(*info));
  }
  return "";
}

}  // namespace

absl::StatusOr<CapturePlan> PlanGraphCapture(const Graph& graph, const std::string& provider) {
  ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  CapturePlan plan;
  std::vector<char> in_body(graph.NodeCapacity(), 0);
  for (const Node* n : order) {
    if (n->provider != provider) continue;
    if (IsCopy(*n, "MemcpyFromHost")) {
      plan.uploads.push_back(n->index);
    } else if (IsCopy(*n, "MemcpyToHost")) {
      plan.downloads.push_back(n->index);
    } else {
      plan.body.push_back(n->index);
      in_body[n->index] = 1;
    }
  }
  if (plan.uploads.empty() && plan.body.empty() && plan.downloads.empty()) {
    return Refused(absl::StrCat("no node runs on provider '", provider, "'"));
  }
  for (const Node* n : order) {
    if (n->op_type == "If" || n->op_type == "Loop" || n->op_type == "Scan" || !n->subgraphs.empty()) {
      return Refused(absl::StrCat(n->Label(), " is control flow: the host decides what it runs"));
    }
  }

  // For every node, a body node it depends on and a body node depending on
  // it (kNone if there is none), over producer/consumer edges.
  std::map<std::string, size_t> producer;
  std::map<std::string, std::vector<size_t>> consumers;
  for (const Node* n : order) {
    for (const auto& o : n->outputs) {
      if (!o.empty()) producer[o] = n->index;
    }
    for (const auto& i : n->inputs) {
      if (!i.empty()) consumers[i].push_back(n->index);
    }
  }
  std::vector<size_t> body_before(graph.NodeCapacity(), kNone);
  std::vector<size_t> body_after(graph.NodeCapacity(), kNone);
  for (const Node* n : order) {
    for (const auto& i : n->inputs) {
      auto p = producer.find(i);
      if (p == producer.end() || body_before[n->index] != kNone) continue;
      body_before[n->index] = in_body[p->second] ? p->second : body_before[p->second];
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node* n = *it;
    for (const auto& o : n->outputs) {
      auto c = consumers.find(o);
      if (c == consumers.end()) continue;
      for (size_t consumer : c->second) {
        if (body_after[n->index] != kNone) break;
        body_after[n->index] = in_body[consumer] ? consumer : body_after[consumer];
      }
    }
  }
  // Host nodes are named before boundary copies: they are what the user can move.
  for (bool copies : {false, true}) {
    for (const Node* n : order) {
      if (in_body[n->index] || (n->provider == provider) != copies) continue;
      if (body_before[n->index] == kNone || body_after[n->index] == kNone) continue;
      return Refused(absl::StrCat(n->Label(), " runs on provider '", n->provider, "' between ", provider, " nodes ",
                                  graph.node(body_before[n->index])->Label(), " and ",
                                  graph.node(body_after[n->index])->Label()));
    }
  }

  for (const auto* list : {&plan.uploads, &plan.body, &plan.downloads}) {
    for (size_t index : *list) {
      const Node* n = graph.node(index);
      auto check = [&](const std::string& value, const char* role) -> absl::Status {
        if (value.empty() || graph.FindInitializer(value) != nullptr) return absl::OkStatus();
        std::string why = DynamicShape(graph, value);
        if (why.empty()) return absl::OkStatus();
        return Refused(absl::StrCat("value '", value, "' (", role, " of ", n->Label(), ") ", why));
      };
      for (const auto& i : n->inputs) RETURN_IF_ERROR(check(i, "input"));
      for (const auto& o : n->outputs) RETURN_IF_ERROR(check(o, "output"));
    }
  }
  return plan;
}

CaptureController::CaptureController(std::shared_ptr<DeviceRuntime> runtime, Options options)
    : runtime_(std::move(runtime)), options_(options) {}

CaptureController::~CaptureController() { DestroyGraph(); }

absl::Status CaptureController::Run(StreamHandle stream, const std::function<absl::Status()>& enqueue) {
  switch (state_) {
    case State::kDisabled: return enqueue();
    case State::kReplaying: {
      RETURN_IF_ERROR(runtime_->GraphLaunch(exec_, stream));
      ++replays_;
      return absl::OkStatus();
    }
    case State::kWarmingUp: break;
  }
  if (warm_runs_ < options_.warmup_runs) {
    RETURN_IF_ERROR(enqueue());
    ++warm_runs_;
    return absl::OkStatus();
  }
  absl::Status captured = Capture(stream, enqueue);
  if (captured.ok()) {
    state_ = State::kReplaying;
    RETURN_IF_ERROR(runtime_->GraphLaunch(exec_, stream));
    ++replays_;
    return absl::OkStatus();
  }
  // Nothing of this run was executed: captured work does not run.
  DestroyGraph();
  state_ = State::kDisabled;
  disabled_reason_ = std::string(captured.message());
  return enqueue();
}

absl::Status CaptureController::Capture(StreamHandle stream, const std::function<absl::Status()>& enqueue) {
  RETURN_IF_ERROR(runtime_->BeginCapture(stream));
  absl::Status body = enqueue();
  // Always end the capture: the stream must leave capture mode.
  absl::StatusOr<GraphHandle> graph = runtime_->EndCapture(stream);
  if (graph.ok()) graph_ = *graph;
  if (!body.ok()) return body;
  if (!graph.ok()) return graph.status();
  ASSIGN_OR_RETURN(exec_, runtime_->GraphInstantiate(graph_));
  return absl::OkStatus();
}

void CaptureController::Reset() {
  DestroyGraph();
  state_ = State::kWarmingUp;
  warm_runs_ = 0;
  disabled_reason_.clear();
}

void CaptureController::DestroyGraph() {
  if (exec_ != nullptr) runtime_->GraphExecDestroy(exec_).IgnoreError();
  if (graph_ != nullptr) runtime_->GraphDestroy(graph_).IgnoreError();
  exec_ = nullptr;
  graph_ = nullptr;
}

}  // namespace onyx
