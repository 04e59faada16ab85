// ServerWatch: the server's side of the run. A background thread scrapes
// every --metrics-url each --scrape-interval (queue depth, in-flight, arena
// bytes over time); at level boundaries the runner takes snapshots of the
// histograms and of ModelStatistics, whose differences become the level's
// server figures and its waterfall.
//
//   ServerWatch watch(config);  watch.Start(run_t0_ns);
//   ServerSnapshot a = watch.Take();  ... level ...  ServerSnapshot b = watch.Take();
//   ServerModelLevel s = ServerWatch::Delta(a, b, "mlp");
//   watch.Stop();  std::vector<ServerPoint> series = watch.series();
//
// A scrape or ModelStatistics call that fails is noted (problems()) and the
// figures it would have given are left out; it never stops the load.
// Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "loadtest/channels.h"
#include "loadtest/prom_text.h"
#include "loadtest/result.h"

namespace onyx::load {

struct ModelStatsSnapshot {
  int64_t success_count = 0, inference_count = 0, execution_count = 0;
  double success_ns = 0, queue_ns = 0, compute_input_ns = 0, compute_infer_ns = 0, compute_output_ns = 0;
};

struct ServerSnapshot {
  bool have_metrics = false;
  MetricsSnapshot metrics;
  bool have_stats = false;
  std::map<std::string, ModelStatsSnapshot> stats;  // by model
};

struct ServerWatchConfig {
  std::vector<std::string> metrics_urls;
  double interval_s = 1;
  std::vector<std::string> models;
  ChannelPool* channels = nullptr;  // for ModelStatistics; null: none
  bool model_stats = true;
};

class ServerWatch {
 public:
  explicit ServerWatch(ServerWatchConfig config) : config_(std::move(config)) {}
  ~ServerWatch() { Stop(); }

  void Start(int64_t run_t0_ns);
  void Stop();
  // Scrapes and asks for ModelStatistics now (on the calling thread).
  ServerSnapshot Take();

  std::vector<ServerPoint> series() const;
  std::vector<std::string> problems() const;

  // The level's server figures for `model` from two snapshots; gauge maxima
  // come from `series` points within [from_s, to_s].
  static ServerModelLevel Delta(const ServerSnapshot& before, const ServerSnapshot& after, const std::string& model,
                                const std::vector<ServerPoint>& series, double from_s, double to_s);

 private:
  bool ScrapeAll(MetricsSnapshot* out);
  void Note(const std::string& problem);
  void Loop();

  const ServerWatchConfig config_;
  int64_t t0_ns_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  std::vector<ServerPoint> series_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> problems_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::load
