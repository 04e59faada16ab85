#include "onyx/session.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/parallel_for.h"
#include "exec/executor.h"
#include "exec/node_evaluator.h"
#include "exec/parallel_executor.h"
#include "exec/pattern_cache.h"
#include "exec/profiler.h"
#include "framework/device_arena.h"
#include "framework/execution_provider.h"
#include "graph/model_loader.h"
#include "graph/shape_propagation.h"
#include "onyx/status_macros.h"
#include "optimizer/fuse_concat_scale_shift.h"
#include "optimizer/fuse_masked_softmax.h"
#include "optimizer/fuse_recurrent_transposes.h"
#include "optimizer/fuse_transpose_matmul.h"
#include "optimizer/graph_transformer.h"
#include "optimizer/nhwc_layout.h"
#include "optimizer/split_conv_over_concat.h"
#include "partition/function_inliner.h"
#include "partition/partitioner.h"
#include "session/custom_op_library.h"
#include "session/model_writer.h"
#include "session/plan_builder.h"
#include "session/provider_registry.h"
#include "session/shared_weights.h"

namespace onyx {

class InferenceSession::Impl {
 public:
  // First member, so destroyed last: host tensors of this session's arena group.
  std::shared_ptr<BFCArena> arena;
  std::string label;
  std::vector<std::unique_ptr<IExecutionProvider>> providers;
  std::vector<const IExecutionProvider*> provider_views;
  LoadedModel model;
  std::unique_ptr<ExecutionPlan> plan;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::map<std::string, int> feed_index;    // feedable name -> index in plan->feed_slots
  std::map<std::string, int> output_index;  // graph output -> index in plan->output_slots
  std::set<std::string> required_inputs;
  PartitionReport report;
  std::map<std::string, int64_t> histogram;
  bool enable_mem_pattern = true;
  std::unique_ptr<PatternCache> patterns;
  std::shared_ptr<SharedWeightsGroup> shared_weights;
  std::unique_ptr<Profiler> profiler;
  std::vector<std::unique_ptr<Stream>> lane_streams;  // per lane; [0] unused
  std::vector<Stream*> lane_stream_views;
  mutable absl::Mutex parallel_mu;  // one parallel run at a time: lanes share streams

  absl::Status Execute(const RunOptions& options, const Feeds& feeds, const std::vector<std::string>& output_names,
                       std::vector<Value>& outputs) const;
  mutable std::atomic<int64_t> last_planned{0};
  mutable std::atomic<int64_t> last_unplanned{0};

  absl::Status ValidateFeed(const std::string& name, const Value& value) const;
};

namespace {

struct CreatedProviders {
  std::vector<std::unique_ptr<IExecutionProvider>> providers;  // ends with cpu
  std::map<std::string, std::string> unavailable;              // name -> why
};

// Providers the host cannot offer (library missing or unloadable, no device)
// are left out unless required; a bad option is the caller's error either way.
bool ProviderUnavailable(const absl::Status& status) {
  return absl::IsNotFound(status) || absl::IsFailedPrecondition(status) || absl::IsUnavailable(status);
}

absl::StatusOr<CreatedProviders> CreateProviders(const SessionOptions& options, const std::string& label) {
  std::vector<std::string> names = options.providers;
  // CPU is always the last resort, whatever position it was listed at.
  names.erase(std::remove(names.begin(), names.end(), "cpu"), names.end());
  names.push_back("cpu");
  CreatedProviders created;
  for (const auto& spec : names) {
    // "name" or "name:key=value;key=value"
    std::string name = spec.substr(0, spec.find(':'));
    ProviderOptions provider_options;
    if (name.size() < spec.size()) {
      for (absl::string_view kv : absl::StrSplit(spec.substr(name.size() + 1), ';', absl::SkipEmpty())) {
        std::pair<std::string, std::string> pair = absl::StrSplit(kv, absl::MaxSplits('=', 1));
        provider_options.settings[pair.first] = pair.second;
      }
    }
    auto provider = CreateProvider(name, provider_options);
    if (!provider.ok()) {
      if (name == "cpu" || options.require_providers || !ProviderUnavailable(provider.status())) {
        // Providers' own messages usually start with "execution provider '<name>'".
        absl::string_view message = provider.status().message();
        const std::string own = absl::StrCat("execution provider '", name, "'");
        const bool named = absl::ConsumePrefix(&message, own);
        return absl::Status(
            provider.status().code(),
            absl::StrCat(label, ": ", own, options.require_providers && name != "cpu" ? " (required)" : "",
                         named ? "" : ": ", message));
      }
      EngineLogger()->warn("{}: execution provider '{}' unavailable, its nodes fall back to CPU: {}", label, name,
                           std::string(provider.status().message()));
      created.unavailable[name] = std::string(provider.status().message());
      continue;
    }
    if (name == "cpu" && !options.custom_op_libraries.empty()) {
      // Custom ops run on host memory, ahead of CPU, which has no kernel for them.
      std::vector<const CustomOpLibrary*> libraries;
      for (const std::string& path : options.custom_op_libraries) {
        auto library = LoadCustomOpLibrary(path);
        if (!library.ok()) {
          return absl::Status(library.status().code(), absl::StrCat(label, ": ", library.status().message()));
        }
        libraries.push_back(*library);
      }
      created.providers.push_back(CreateCustomOpProvider(libraries));
    }
    created.providers.push_back(*std::move(provider));
  }
  return created;
}

std::string ShapeText(const ValueInfo& info) {
  std::vector<std::string> dims;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (info.dims[i] >= 0) {
      dims.push_back(absl::StrCat(info.dims[i]));
    } else {
      dims.push_back(i < info.dim_params.size() && !info.dim_params[i].empty() ? info.dim_params[i] : "?");
    }
  }
  return "[" + absl::StrJoin(dims, ",") + "]";
}

}  // namespace

absl::Status InferenceSession::Impl::ValidateFeed(const std::string& name, const Value& value) const {
  const ValueInfo* info = model.graph->FindValueInfo(name);
  if (info == nullptr) return absl::OkStatus();
  if (value.is_none()) {
    if (info->kind == ValueInfo::Kind::kOptional) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(label, ": input '", name, "' is empty but not optional"));
  }
  if (value.is_sequence() != (info->kind == ValueInfo::Kind::kSequence)) {
    if (!(info->kind == ValueInfo::Kind::kOptional)) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": input '", name, "' expects a ",
                                                     info->kind == ValueInfo::Kind::kSequence ? "sequence" : "tensor",
                                                     ", received a ", value.is_sequence() ? "sequence" : "tensor"));
    }
  }
  if (!value.is_tensor()) return absl::OkStatus();
  const Tensor& t = value.tensor();
  if (info->type != DataType::kUndefined && t.type() != info->type) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": input '", name, "' expects element type ",
                                                   DataTypeName(info->type), ", received ", DataTypeName(t.type())));
  }
  if (!info->has_shape) return absl::OkStatus();
  bool match = t.rank() == static_cast<int64_t>(info->dims.size());
  for (size_t i = 0; match && i < info->dims.size(); ++i) {
    match = info->dims[i] < 0 || info->dims[i] == t.dims()[i];
  }
  if (!match) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": input '", name, "' expects shape ", ShapeText(*info),
                                                   ", received ", DimsToString(t.dims())));
  }
  return absl::OkStatus();
}

InferenceSession::InferenceSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InferenceSession::~InferenceSession() = default;

absl::StatusOr<std::unique_ptr<InferenceSession>> InferenceSession::Create(const std::string& model_path,
                                                                           const SessionOptions& options) {
  SessionOptions with_dir = options;
  if (with_dir.model_dir.empty()) {
    size_t slash = model_path.find_last_of('/');
    with_dir.model_dir = slash == std::string::npos ? "." : model_path.substr(0, slash);
  }
  if (with_dir.model_name.empty()) with_dir.model_name = model_path;
  return CreateImpl(model_path, {}, with_dir);
}

absl::StatusOr<std::unique_ptr<InferenceSession>> InferenceSession::CreateFromBytes(std::string_view model_bytes,
                                                                                    const SessionOptions& options) {
  return CreateImpl("", model_bytes, options);
}

absl::StatusOr<std::unique_ptr<InferenceSession>> InferenceSession::CreateImpl(const std::string& model_path,
                                                                               std::string_view model_bytes,
                                                                               const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->label = options.model_name.empty() ? "model" : "model '" + options.model_name + "'";
  impl->enable_mem_pattern = options.enable_mem_pattern;
  impl->profiler = std::make_unique<Profiler>(options.profile_file_prefix);
  if (options.enable_profiling) impl->profiler->EnableAll();
  impl->patterns = std::make_unique<PatternCache>(std::max(options.mem_pattern_cache_size, 0));
  if (options.arena_limit_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(impl->label, ": arena_limit_bytes must be >= 0, got ", options.arena_limit_bytes));
  }
  {
    auto arena = AcquireCpuArena(options.arena_group, static_cast<size_t>(options.arena_limit_bytes));
    if (!arena.ok())
      return absl::Status(arena.status().code(), absl::StrCat(impl->label, ": ", arena.status().message()));
    impl->arena = *std::move(arena);
  }

  LoadOptions load;
  load.model_name = options.model_name;
  load.model_dir = options.model_dir;
  load.input_shape_overrides = options.input_shape_overrides;
  load.model_path = model_path;
  if (model_path.empty()) {
    ASSIGN_OR_RETURN(impl->model, LoadModel(model_bytes, load));
  } else {
    ASSIGN_OR_RETURN(impl->model, LoadModelFile(load));
  }
  Graph& graph = *impl->model.graph;
  {
    auto order = graph.TopologicalOrder();
    if (!order.ok())
      return absl::Status(order.status().code(), absl::StrCat(impl->label, ": ", order.status().message()));
  }
  for (const auto& name : graph.inputs()) {
    const ValueInfo* info = graph.FindValueInfo(name);
    if (info == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(impl->label, ": graph input '", name, "' has no type"));
    }
  }

  ASSIGN_OR_RETURN(CreatedProviders created, CreateProviders(options, impl->label));
  impl->providers = std::move(created.providers);
  for (const auto& p : impl->providers) impl->provider_views.push_back(p.get());

  // Constant folding evaluates nodes with the CPU provider, always the last.
  const IExecutionProvider& cpu = *impl->providers.back();
  // Folding can make a Reshape's shape (the exporters' Shape -> Gather ->
  // Concat residue) constant while its output keeps the shape inferred at
  // load time, unknown; re-inferred, the next Shape folds too, and so on down
  // a network (ShuffleNet's channel shuffles, a transformer's heads).
  const int64_t ir_version = impl->model.ir_version;
  RETURN_IF_ERROR(OptimizeGraph(
      graph, options.optimization_level,
      [&cpu](const Graph& g, const Node& n) { return EvaluateConstantNode(cpu, g, n); },
      [ir_version](Graph& g) -> absl::StatusOr<int> {
        // In process while that reaches further (one pass carries a block's
        // shapes to the next computed Reshape); the whole-graph inference,
        // isolated, only when it does not.
        const int propagated = PropagateStaticShapes(g);
        if (propagated > 0) return propagated;
        return ReinferShapes(g, ir_version);
      }));
  for (int round = 0; round < 16; ++round) {
    ASSIGN_OR_RETURN(int inlined, InlineFunctions(graph, impl->provider_views, impl->model.functions));
    if (inlined == 0) break;
    RETURN_IF_ERROR(ReinferShapes(graph, impl->model.ir_version).status());
  }
  // The channels-last, normalised-concat, strided-product, masked-softmax
  // and strided recurrent operators are the CPU provider's: these passes run only when it
  // runs the whole graph.
  const bool host_only = std::all_of(impl->providers.begin(), impl->providers.end(),
                                     [](const auto& p) { return std::string_view(p->device()) == "cpu"; });
  if (options.optimization_level == OptimizationLevel::kAll && host_only) {
    const NhwcLayout layout;
    const FuseConcatScaleShift normalised_concats;
    const SplitConvOverConcat split_over_concats;
    const FuseTransposeMatMul strided_products;
    const FuseMaskedSoftmax masked_softmax;
    const FuseRecurrentTransposes recurrent_transposes;
    for (const GraphTransformer* pass :
         {static_cast<const GraphTransformer*>(&layout), static_cast<const GraphTransformer*>(&normalised_concats),
          static_cast<const GraphTransformer*>(&split_over_concats),
          static_cast<const GraphTransformer*>(&strided_products),
          static_cast<const GraphTransformer*>(&masked_softmax),
          static_cast<const GraphTransformer*>(&recurrent_transposes)}) {
      auto applied = pass->Apply(graph);
      if (!applied.ok())
        return absl::Status(applied.status().code(), absl::StrCat(impl->label, ": ", applied.status().message()));
    }
  }
  auto report = PartitionGraph(graph, impl->provider_views);
  if (!report.ok()) {
    return absl::Status(report.status().code(), absl::StrCat(impl->label, ": ", report.status().message()));
  }
  impl->report = *std::move(report);
  CountUnavailableProviderFallback(graph, created.unavailable, impl->report);
  if (options.max_cpu_fallback_nodes >= 0 &&
      static_cast<int64_t>(impl->report.fallback_nodes.size()) > options.max_cpu_fallback_nodes) {
    return absl::FailedPreconditionError(absl::StrCat(impl->label, ": ", impl->report.fallback_nodes.size(),
                                                      " nodes fell back to CPU, more than max_cpu_fallback_nodes=",
                                                      options.max_cpu_fallback_nodes, "\n", impl->report.ToString()));
  }
  if (!options.shared_weights_group.empty()) {
    impl->shared_weights = ShareWeights(options.shared_weights_group, graph);
  }
  // Kernels are created under the thread count the session runs with, so
  // what they prepare for it at creation (oneDNN primitives) is what runs.
  ScopedIntraOpThreads creation_threads(std::max(options.intra_op_threads, 0));
  // Written before the plan releases packed weights' plain bytes.
  if (!options.optimized_model_path.empty()) {
    RETURN_IF_ERROR(WriteOptimizedModel(impl->model, options.optimized_model_path));
  }
  // A shared-weights group holds the plain weights for its later sessions.
  const bool release_packed = impl->shared_weights == nullptr;
  auto plan = BuildExecutionPlan(graph, impl->provider_views, nullptr, release_packed);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(), absl::StrCat(impl->label, ": ", plan.status().message()));
  }
  impl->plan = *std::move(plan);
  impl->plan->intra_op_threads = std::max(options.intra_op_threads, 0);
  {
    std::vector<std::string> stream_providers;
    for (const auto* p : impl->provider_views) {
      if (p->CreateStream() != nullptr) stream_providers.push_back(p->name());
    }
    AssignPlanLanes(*impl->plan, std::max(options.inter_op_threads, 1), stream_providers);
    for (size_t lane = 0; lane < impl->plan->lane_provider.size(); ++lane) {
      std::unique_ptr<Stream> stream;
      const std::string& provider = impl->plan->lane_provider[lane];
      if (lane > 0 && provider.empty()) stream = MakeThreadStream();
      for (const auto* p : impl->provider_views) {
        if (lane > 0 && !provider.empty() && p->name() == provider) stream = p->CreateStream();
      }
      impl->lane_stream_views.push_back(stream.get());
      impl->lane_streams.push_back(std::move(stream));
    }
  }

  for (const auto& name : graph.inputs()) {
    impl->inputs.push_back(*graph.FindValueInfo(name));
    impl->required_inputs.insert(name);
  }
  for (size_t i = 0; i < impl->plan->feed_names.size(); ++i) impl->feed_index[impl->plan->feed_names[i]] = i;
  for (size_t i = 0; i < impl->plan->output_names.size(); ++i) {
    const std::string& name = impl->plan->output_names[i];
    impl->output_index[name] = i;
    const ValueInfo* info = graph.FindValueInfo(name);
    ValueInfo out = info ? *info : ValueInfo{};
    out.name = name;
    impl->outputs.push_back(out);
  }
  for (const Node* n : graph.Nodes()) impl->histogram[n->op_type]++;
  return std::unique_ptr<InferenceSession>(new InferenceSession(std::move(impl)));
}

absl::StatusOr<std::vector<Value>> InferenceSession::Run(const RunOptions& options, const Feeds& feeds,
                                                         const std::vector<std::string>& output_names) const {
  std::vector<Value> outputs;
  RETURN_IF_ERROR(impl_->Execute(options, feeds, output_names, outputs));
  return outputs;
}

absl::Status InferenceSession::RunWithBoundOutputs(const RunOptions& options, const Feeds& feeds,
                                                   const std::vector<std::string>& output_names,
                                                   std::vector<Value>& outputs) const {
  return impl_->Execute(options, feeds, output_names, outputs);
}

absl::Status InferenceSession::Impl::Execute(const RunOptions& options, const Feeds& feeds,
                                             const std::vector<std::string>& output_names,
                                             std::vector<Value>& outputs) const {
  const Impl& s = *this;
  const ExecutionPlan& plan = *s.plan;
  std::string signature;
  std::shared_ptr<const LearnedPattern> pattern;
  if (s.enable_mem_pattern) {
    for (const auto& [name, value] : feeds) {
      absl::StrAppend(&signature, name, "=");
      if (value.is_tensor()) absl::StrAppend(&signature, DimsToString(value.tensor().dims()));
      absl::StrAppend(&signature, ";");
    }
    pattern = s.patterns->Find(signature);
  }
  const bool parallel = !plan.lane_nodes.empty();
  if (parallel) pattern = nullptr;  // lifetimes are planned for sequential order
  FrameMemory memory{s.arena.get(), pattern.get(), s.enable_mem_pattern && pattern == nullptr && !parallel};
  ExecutionFrame frame(plan, options, memory);
  RETURN_IF_ERROR(frame.Init());
  std::vector<bool> fed(plan.feed_slots.size(), false);
  for (const auto& [name, value] : feeds) {
    auto it = s.feed_index.find(name);
    if (it == s.feed_index.end()) {
      std::vector<std::string> names;
      for (const auto& i : s.inputs) names.push_back(i.name);
      return absl::InvalidArgumentError(
          absl::StrCat(s.label, ": unknown input '", name, "' (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (fed[it->second]) {
      return absl::InvalidArgumentError(absl::StrCat(s.label, ": input '", name, "' is fed twice"));
    }
    fed[it->second] = true;
    RETURN_IF_ERROR(s.ValidateFeed(name, value));
    frame.mutable_value(plan.feed_slots[it->second]) = value;
  }
  for (size_t i = 0; i < fed.size(); ++i) {
    if (!fed[i] && s.required_inputs.count(plan.feed_names[i])) {
      const ValueInfo* info = s.model.graph->FindValueInfo(plan.feed_names[i]);
      if (info != nullptr && info->kind == ValueInfo::Kind::kOptional) continue;
      return absl::InvalidArgumentError(absl::StrCat(s.label, ": missing input '", plan.feed_names[i], "'"));
    }
  }
  std::vector<int> wanted;
  if (output_names.empty()) {
    wanted = plan.output_slots;
  } else {
    for (const auto& name : output_names) {
      auto it = s.output_index.find(name);
      if (it == s.output_index.end()) {
        return absl::InvalidArgumentError(absl::StrCat(s.label, ": unknown output '", name, "'"));
      }
      wanted.push_back(plan.output_slots[it->second]);
    }
  }
  if (!outputs.empty() && outputs.size() != wanted.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(s.label, ": ", outputs.size(), " bound outputs for ", wanted.size(), " requested outputs"));
  }
  outputs.resize(wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (outputs[i].is_tensor()) frame.BindOutput(wanted[i], outputs[i].tensor());
  }
  RunLog(options.log_level, spdlog::level::debug, "{}: run '{}' starts ({} feeds)", s.label, options.run_tag,
         feeds.size());
  // Profiling starts here, after the feeds are accepted, so that a refused run
  // does not use up one of the runs StartProfiling() asked for.
  Profiler* profiler = s.profiler->BeginRun() ? s.profiler.get() : nullptr;
  frame.set_profiler(profiler);
  const int64_t run_start_us = profiler != nullptr ? profiler->NowMicros() : 0;
  absl::Status executed;
  if (parallel) {
    absl::MutexLock lock(&s.parallel_mu);
    executed = ExecutePlanParallel(frame, s.lane_stream_views);
  } else {
    executed = ExecutePlan(frame);
  }
  if (profiler != nullptr) profiler->EndRun(s.label, run_start_us);
  RETURN_IF_ERROR(executed);
  if (options.shrink_arena_at_end) {
    frame.ReleaseAll();
    s.arena->Shrink();
  }
  if (memory.learn) {
    std::shared_ptr<const LearnedPattern> learned = frame.Learn();
    s.last_planned = static_cast<int64_t>(learned->pattern.total_bytes);
    s.last_unplanned = static_cast<int64_t>(learned->bytes_without_reuse);
    s.patterns->Insert(signature, std::move(learned));
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    const Value& produced = frame.value(wanted[i]);
    if (!outputs[i].is_tensor()) {
      outputs[i] = produced;
      continue;
    }
    // Bound: the kernel wrote into the caller's buffer, or produced a view
    // elsewhere that is copied in now.
    Tensor& bound = outputs[i].mutable_tensor();
    if (!produced.is_tensor() || produced.tensor().type() != bound.type() || produced.tensor().dims() != bound.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          s.label, ": bound output '", s.plan->slot_names[wanted[i]], "' is ", DataTypeName(bound.type()), " ",
          DimsToString(bound.dims()), ", the model produced ",
          produced.is_tensor()
              ? absl::StrCat(DataTypeName(produced.tensor().type()), " ", DimsToString(produced.tensor().dims()))
              : std::string("a non-tensor")));
    }
    if (produced.tensor().raw() != bound.raw() && bound.type() != DataType::kString) {
      std::memcpy(bound.mutable_raw(), produced.tensor().raw(), bound.byte_size());
    }
  }
  return absl::OkStatus();
}

const std::vector<ValueInfo>& InferenceSession::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& InferenceSession::outputs() const { return impl_->outputs; }
const PartitionReport& InferenceSession::partition_report() const { return impl_->report; }

std::vector<KernelStats> InferenceSession::kernel_stats() const {
  std::vector<KernelStats> stats;
  for (const NodeRuntime& node : impl_->plan->nodes) {
    KernelStats k;
    k.node = node.node->Label();
    k.op_type = node.node->op_type;
    k.provider = node.provider;
    k.count = node.stats->count.load(std::memory_order_relaxed);
    k.total_ns = node.stats->total_ns.load(std::memory_order_relaxed);
    k.max_ns = node.stats->max_ns.load(std::memory_order_relaxed);
    for (size_t b = 0; b < kKernelLatencyBuckets; ++b) {
      k.bucket_counts[b] = node.stats->buckets[b].load(std::memory_order_relaxed);
    }
    stats.push_back(std::move(k));
  }
  return stats;
}

std::vector<KernelStats> InferenceSession::op_type_stats() const {
  std::map<std::pair<std::string, std::string>, KernelStats> by_type;
  for (const KernelStats& k : kernel_stats()) {
    KernelStats& sum = by_type[{k.op_type, k.provider}];
    sum.op_type = k.op_type;
    sum.provider = k.provider;
    AddKernelStats(sum, k);
  }
  std::vector<KernelStats> out;
  for (auto& [key, k] : by_type) out.push_back(std::move(k));
  return out;
}

void InferenceSession::StartProfiling(int64_t runs, const std::string& file_prefix) const {
  if (!file_prefix.empty()) impl_->profiler->SetPrefix(file_prefix);
  impl_->profiler->EnableRuns(runs);
}

int64_t InferenceSession::profiled_runs() const { return impl_->profiler->recorded_runs(); }

absl::StatusOr<std::string> InferenceSession::EndProfiling() const { return impl_->profiler->Write(); }

MemoryPlanInfo InferenceSession::memory_plan_info() const {
  MemoryPlanInfo info;
  info.patterns = static_cast<int64_t>(impl_->patterns->size());
  info.planned_bytes = impl_->last_planned.load();
  info.without_reuse_bytes = impl_->last_unplanned.load();
  info.released_constants = impl_->plan->released_constants;
  info.released_constant_bytes = impl_->plan->released_constant_bytes;
  return info;
}
const std::map<std::string, int64_t>& InferenceSession::op_histogram() const { return impl_->histogram; }

}  // namespace onyx
