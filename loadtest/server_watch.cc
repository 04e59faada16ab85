#include "loadtest/server_watch.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "loadtest/clock.h"

namespace onyx::load {

void ServerWatch::Start(int64_t run_t0_ns) {
  t0_ns_ = run_t0_ns;
  if (config_.metrics_urls.empty()) return;
  thread_ = std::thread([this] { Loop(); });
}

void ServerWatch::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ServerWatch::Note(const std::string& problem) {
  absl::MutexLock lock(&mu_);
  if (problems_.size() < 20 && std::find(problems_.begin(), problems_.end(), problem) == problems_.end()) {
    problems_.push_back(problem);
  }
}

bool ServerWatch::ScrapeAll(MetricsSnapshot* out) {
  bool all = !config_.metrics_urls.empty();
  for (const std::string& url : config_.metrics_urls) {
    absl::StatusOr<std::string> body = HttpGet(url, 2.0);
    if (!body.ok()) {
      Note(std::string(body.status().message()));
      all = false;
      continue;
    }
    AddSnapshot(out, ParseMetrics(*body));
  }
  return all;
}

void ServerWatch::Loop() {
  const int64_t step = static_cast<int64_t>(config_.interval_s * 1e9);
  for (int64_t next = NowNs(); !stop_; next += step) {
    while (!stop_ && NowNs() < next) SleepUntilNs(std::min(next, NowNs() + 50'000'000));
    if (stop_) break;
    MetricsSnapshot snap;
    ScrapeAll(&snap);
    const double t = (NowNs() - t0_ns_) / 1e9;
    absl::MutexLock lock(&mu_);
    for (const std::string& model : config_.models) {
      auto it = snap.models.find(model);
      if (it == snap.models.end()) continue;
      const ModelMetrics& m = it->second;
      series_.push_back({t, model, m.queue_depth, m.inflight, m.arena_in_use, m.arena_reserved, m.requests_total});
    }
  }
}

ServerSnapshot ServerWatch::Take() {
  ServerSnapshot snap;
  if (!config_.metrics_urls.empty()) snap.have_metrics = ScrapeAll(&snap.metrics);
  if (config_.channels == nullptr || !config_.model_stats) return snap;
  snap.have_stats = true;
  for (int channel : config_.channels->OnePerTarget()) {
    for (const std::string& model : config_.models) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      inference::ModelStatisticsRequest request;
      request.set_name(model);
      inference::ModelStatisticsResponse response;
      grpc::Status status = config_.channels->typed(channel)->ModelStatistics(&context, request, &response);
      if (!status.ok()) {
        Note(absl::StrCat("ModelStatistics('", model, "') on ", config_.channels->target(channel), ": ",
                          status.error_message()));
        snap.have_stats = false;
        continue;
      }
      ModelStatsSnapshot& s = snap.stats[model];
      for (const auto& v : response.model_stats()) {
        if (v.name() != model) continue;
        const auto& i = v.inference_stats();
        s.success_count += static_cast<int64_t>(i.success().count());
        s.success_ns += static_cast<double>(i.success().ns());
        s.queue_ns += static_cast<double>(i.queue().ns());
        s.compute_input_ns += static_cast<double>(i.compute_input().ns());
        s.compute_infer_ns += static_cast<double>(i.compute_infer().ns());
        s.compute_output_ns += static_cast<double>(i.compute_output().ns());
        s.inference_count += static_cast<int64_t>(v.inference_count());
        s.execution_count += static_cast<int64_t>(v.execution_count());
      }
    }
  }
  return snap;
}

std::vector<ServerPoint> ServerWatch::series() const {
  absl::MutexLock lock(&mu_);
  return series_;
}

std::vector<std::string> ServerWatch::problems() const {
  absl::MutexLock lock(&mu_);
  return problems_;
}

ServerModelLevel ServerWatch::Delta(const ServerSnapshot& before, const ServerSnapshot& after, const std::string& model,
                                    const std::vector<ServerPoint>& series, double from_s, double to_s) {
  ServerModelLevel out;
  auto a = after.metrics.models.find(model);
  auto b = before.metrics.models.find(model);
  if (before.have_metrics && after.have_metrics && a != after.metrics.models.end()) {
    const ModelMetrics empty;
    const ModelMetrics& old = b == before.metrics.models.end() ? empty : b->second;
    out.have_metrics = true;
    out.request = HistogramDelta(a->second.request, old.request);
    out.queue = HistogramDelta(a->second.queue, old.queue);
    out.compute = HistogramDelta(a->second.compute, old.compute);
    out.batch_requests = HistogramDelta(a->second.batch_requests, old.batch_requests);
    out.batch_rows = HistogramDelta(a->second.batch_rows, old.batch_rows);
    out.fallback_nodes = a->second.fallback_nodes;
    out.queue_depth_max = a->second.queue_depth;
    out.inflight_max = a->second.inflight;
    out.arena_in_use_max = a->second.arena_in_use;
    out.arena_reserved_max = a->second.arena_reserved;
    for (const ServerPoint& p : series) {
      if (p.model != model || p.t_s < from_s || p.t_s > to_s) continue;
      out.queue_depth_max = std::max(out.queue_depth_max, p.queue_depth);
      out.inflight_max = std::max(out.inflight_max, p.inflight);
      out.arena_in_use_max = std::max(out.arena_in_use_max, p.arena_in_use);
      out.arena_reserved_max = std::max(out.arena_reserved_max, p.arena_reserved);
    }
  }
  auto sa = after.stats.find(model);
  auto sb = before.stats.find(model);
  if (before.have_stats && after.have_stats && sa != after.stats.end() && sb != before.stats.end()) {
    out.have_stats = true;
    out.success_count = sa->second.success_count - sb->second.success_count;
    out.inference_count = sa->second.inference_count - sb->second.inference_count;
    out.execution_count = sa->second.execution_count - sb->second.execution_count;
    out.success_ns = sa->second.success_ns - sb->second.success_ns;
    out.queue_ns = sa->second.queue_ns - sb->second.queue_ns;
    out.compute_input_ns = sa->second.compute_input_ns - sb->second.compute_input_ns;
    out.compute_infer_ns = sa->second.compute_infer_ns - sb->second.compute_infer_ns;
    out.compute_output_ns = sa->second.compute_output_ns - sb->second.compute_output_ns;
  }
  return out;
}

}  // namespace onyx::load
