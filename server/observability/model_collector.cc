#include "server/observability/model_collector.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

#include "server/observability/collector_util.h"

namespace onyx::server {
namespace {

using prometheus::MetricType;
using Labels = std::vector<prometheus::ClientMetric::Label>;

constexpr double kNsPerSecond = 1e9;

void AddHistogram(prometheus::MetricFamily& family, Labels labels, const onyx::KernelStats& stats) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.histogram.sample_sum = static_cast<double>(stats.total_ns) / kNsPerSecond;
  uint64_t cumulative = 0;
  for (size_t b = 0; b < stats.bucket_counts.size(); ++b) {
    cumulative += static_cast<uint64_t>(stats.bucket_counts[b]);
    prometheus::ClientMetric::Bucket bucket;
    bucket.cumulative_count = cumulative;
    bucket.upper_bound = b < std::size(onyx::kKernelLatencyBoundsNs)
                             ? static_cast<double>(onyx::kKernelLatencyBoundsNs[b]) / kNsPerSecond
                             : std::numeric_limits<double>::infinity();
    metric.histogram.bucket.push_back(bucket);
  }
  // The buckets, not `count`: the atomics are read one by one while runs
  // record, and _count must equal the +Inf bucket.
  metric.histogram.sample_count = cumulative;
  family.metric.push_back(std::move(metric));
}

}  // namespace

std::vector<ModelSnapshot> SnapshotModels(const ModelRepository& repository) {
  std::vector<ModelSnapshot> out;
  for (const std::shared_ptr<const Model>& model : repository.LoadedModels()) {
    ModelSnapshot snap;
    snap.name = model->name();
    snap.version = model->version_string();
    snap.load_seconds = absl::ToDoubleSeconds(model->load_duration());
    snap.queue_depth = model->scheduler().QueueDepth();
    snap.in_flight = model->scheduler().InFlight();
    const BucketSessions& sessions = model->sessions();
    std::map<std::pair<std::string, std::string>, onyx::KernelStats> op_types;
    std::map<std::string, onyx::KernelStats> nodes;
    for (size_t i = 0; i < sessions.size(); ++i) {
      const onyx::InferenceSession& session = sessions.session(i);
      const onyx::PartitionReport& report = session.partition_report();
      snap.buckets.push_back({sessions.bucket_label(i), static_cast<int64_t>(report.fallback_nodes.size()),
                              report.partitions, report.memcpy_nodes});
      // One read of the session's per-node statistics feeds both sums.
      for (const onyx::KernelStats& k : session.kernel_stats()) {
        onyx::KernelStats& by_type = op_types[{k.op_type, k.provider}];
        by_type.op_type = k.op_type;
        by_type.provider = k.provider;
        onyx::AddKernelStats(by_type, k);
        onyx::KernelStats& by_node = nodes[k.node];
        by_node.node = k.node;
        by_node.op_type = k.op_type;
        by_node.provider = k.provider;
        onyx::AddKernelStats(by_node, k);
      }
    }
    for (auto& [key, k] : op_types) snap.op_types.push_back(std::move(k));
    for (auto& [key, k] : nodes) snap.nodes.push_back(std::move(k));
    out.push_back(std::move(snap));
  }
  return out;
}

std::vector<prometheus::MetricFamily> ModelFamilies(const std::vector<ModelStatus>& index,
                                                    const std::vector<ModelSnapshot>& models) {
  std::vector<prometheus::MetricFamily> f = {
      MakeFamily("onyx_model_state", "1 for the model version's lifecycle state, 0 for the others",
                 MetricType::Gauge),
      MakeFamily("onyx_model_load_duration_seconds", "Wall time the model version took to load",
                 MetricType::Gauge),
      MakeFamily("onyx_queue_depth", "Requests waiting in the model version's dynamic batcher",
                 MetricType::Gauge),
      MakeFamily("onyx_inflight_requests", "Requests the model version accepted and has not completed",
                 MetricType::Gauge),
      MakeFamily("onyx_model_cpu_fallback_nodes",
                 "Nodes that fell back to CPU from a preferred provider, per bucket session", MetricType::Gauge),
      MakeFamily("onyx_model_partitions", "Runs of consecutive nodes on one provider, per bucket session",
                 MetricType::Gauge),
      MakeFamily("onyx_model_memcpy_nodes", "Copies inserted at device boundaries, per bucket session",
                 MetricType::Gauge),
      MakeFamily("onyx_kernel_duration_seconds", "Run time of the model's nodes per op type and provider",
                 MetricType::Histogram),
      MakeFamily("onyx_node_mean_seconds", "Mean run time of the model's slowest nodes (top by mean)",
                 MetricType::Gauge),
      MakeFamily("onyx_node_max_seconds", "Longest run of the model's slowest nodes (top by mean)",
                 MetricType::Gauge),
  };
  for (const ModelStatus& status : index) {
    for (ModelState state : {ModelState::kLoading, ModelState::kReady, ModelState::kUnavailable,
                             ModelState::kUnloading}) {
      AddSample(f[0],
                {{"model", status.name}, {"version", status.version}, {"state", std::string(ModelStateName(state))}},
                status.state == state ? 1 : 0);
    }
  }
  for (const ModelSnapshot& m : models) {
    const Labels base = {{"model", m.name}, {"version", m.version}};
    AddSample(f[1], base, m.load_seconds);
    AddSample(f[2], base, static_cast<double>(m.queue_depth));
    AddSample(f[3], base, static_cast<double>(m.in_flight));
    for (const ModelSnapshot::Bucket& b : m.buckets) {
      Labels labels = base;
      labels.push_back({"bucket", b.label});
      AddSample(f[4], labels, static_cast<double>(b.fallback_nodes));
      AddSample(f[5], labels, static_cast<double>(b.partitions));
      AddSample(f[6], labels, static_cast<double>(b.memcpy_nodes));
    }
    for (const onyx::KernelStats& k : m.op_types) {
      Labels labels = base;
      labels.push_back({"op_type", k.op_type});
      labels.push_back({"provider", k.provider});
      AddHistogram(f[7], std::move(labels), k);
    }
    std::vector<const onyx::KernelStats*> ran;
    for (const onyx::KernelStats& k : m.nodes) {
      if (k.count > 0) ran.push_back(&k);
    }
    auto mean = [](const onyx::KernelStats* k) { return static_cast<double>(k->total_ns) / k->count; };
    // Ties broken by node label so the exported set is stable between scrapes.
    std::sort(ran.begin(), ran.end(), [&](const onyx::KernelStats* a, const onyx::KernelStats* b) {
      return mean(a) != mean(b) ? mean(a) > mean(b) : a->node < b->node;
    });
    if (ran.size() > kTopNodes) ran.resize(kTopNodes);
    for (const onyx::KernelStats* k : ran) {
      Labels labels = base;
      labels.push_back({"node", k->node});
      labels.push_back({"op_type", k->op_type});
      labels.push_back({"provider", k->provider});
      AddSample(f[8], labels, mean(k) / kNsPerSecond);
      AddSample(f[9], labels, static_cast<double>(k->max_ns) / kNsPerSecond);
    }
  }
  return f;
}

std::vector<prometheus::MetricFamily> ModelCollector::Collect() const {
  return ModelFamilies(repository_->Index(), SnapshotModels(*repository_));
}

}  // namespace onyx::server
