// Reading what onyxd's /metrics serves: the Prometheus text format, an HTTP
// GET for it, and the figures onyx-load reports per model.
//
//   ASSIGN_OR_RETURN(std::string body, HttpGet("http://127.0.0.1:8002/metrics", 2.0));
//   MetricsSnapshot s = ParseMetrics(body);       // per model, versions and replicas summed
//   ServerHistogram d = HistogramDelta(after.models["mlp"].request, before.models["mlp"].request);
//   double p99 = HistogramQuantile(d, 0.99, &low, &high);   // and the bucket it lies in
//
// Pure functions except HttpGet (a blocking socket call); thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "loadtest/result.h"

namespace onyx::load {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Every sample line; comments and malformed lines are skipped.
std::vector<PromSample> ParsePromText(absl::string_view text);

struct ModelMetrics {
  // Histograms: cumulative count per `le` bound, plus _sum and _count.
  ServerHistogram request, queue, compute, batch_requests, batch_rows;
  double queue_depth = 0, inflight = 0, arena_in_use = 0, arena_reserved = 0, fallback_nodes = 0;
  double requests_total = 0;
};

struct MetricsSnapshot {
  std::map<std::string, ModelMetrics> models;  // by model name
  double process_rss = 0;
};

// The onyx_* series onyx-load reports, by model (every version summed).
MetricsSnapshot ParseMetrics(absl::string_view text);
// Adds `b` into `a` (replicas).
void AddSnapshot(MetricsSnapshot* a, const MetricsSnapshot& b);

ServerHistogram HistogramDelta(const ServerHistogram& after, const ServerHistogram& before);
// histogram_quantile as Prometheus computes it (linear inside the bucket);
// *low / *high receive the bounds of the bucket the quantile falls in. 0 when
// the histogram is empty.
double HistogramQuantile(const ServerHistogram& h, double q, double* low, double* high);

// GET of an http:// URL; the body of a 200 reply. UNAVAILABLE naming the URL
// otherwise.
absl::StatusOr<std::string> HttpGet(const std::string& url, double timeout_s);

}  // namespace onyx::load
