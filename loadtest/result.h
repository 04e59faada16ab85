// What one onyx-load run measured: the data model every report (text, JSON,
// CSV, HTML, compare) is written from, and what `compare` reads back.
//
// Plain structs, no behaviour beyond small accessors; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "loadtest/histogram.h"

namespace onyx::load {

// A histogram kept compactly once its level is over: non-empty buckets only.
struct HistogramData {
  std::vector<std::pair<int, int64_t>> buckets;  // (Histogram bucket index, count)
  int64_t count = 0, min = 0, max = 0;
  double sum = 0;

  static HistogramData From(const Histogram& h);
  Histogram Build() const;  // the full histogram again (for percentiles)
  double mean() const { return count ? sum / static_cast<double>(count) : 0; }
};

// Failed calls of one gRPC status code (or "OUTPUT_MISMATCH" for --validate)
// with the most frequent messages.
struct ErrorGroup {
  std::string code;  // "UNAVAILABLE", ...
  int64_t count = 0;
  std::vector<std::pair<std::string, int64_t>> messages;  // top messages, most frequent first
};

// Prometheus histogram deltas over a level: cumulative counts per upper bound.
struct ServerHistogram {
  std::vector<double> le;          // upper bounds, ascending, +Inf last
  std::vector<double> cumulative;  // delta of the cumulative counts
  double sum = 0, count = 0;
  bool empty() const { return count <= 0; }
};

// The server's view of one model over one level.
struct ServerModelLevel {
  bool have_metrics = false;  // from /metrics deltas
  ServerHistogram request, queue, compute, batch_requests, batch_rows;
  double queue_depth_max = 0, inflight_max = 0;
  double arena_in_use_max = 0, arena_reserved_max = 0;
  double fallback_nodes = 0;
  bool have_stats = false;  // from ModelStatistics deltas
  int64_t success_count = 0, inference_count = 0, execution_count = 0;
  double success_ns = 0, queue_ns = 0, compute_input_ns = 0, compute_infer_ns = 0, compute_output_ns = 0;
};

struct ModelLevelResult {
  std::string model;     // "all": every model of the run together
  int64_t intended = 0;  // requests the schedule asked for in the measured time
  int64_t sent = 0, ok = 0, failed = 0, dropped = 0;
  HistogramData response;  // from the intended send time
  HistogramData service;   // from the actual send time
  std::vector<ErrorGroup> errors;
  double throughput = 0;  // ok / measured seconds
  ServerModelLevel server;

  // Failed plus dropped over intended (0 when nothing was intended).
  double error_share() const;
};

struct CriterionOutcome {
  std::string text;  // as written: "p99<25ms"
  double measured = 0;
  bool met = false;
  std::string level;  // label of the level it was checked on
};

struct LevelResult {
  int index = 0;
  std::string label;  // "rate 1000/s", "concurrency 8"
  bool open_loop = false;
  double target_rate = 0;  // open loop (at the level's start for a linear ramp)
  double target_rate_end = 0;
  int concurrency = 0;    // closed loop
  double measured_s = 0;  // length of the measured time
  double start_s = 0;     // since the run began
  std::vector<ModelLevelResult> models;
  ModelLevelResult all;
  HistogramData send_lag;  // how late the generator woke for each send
  int64_t late_sends = 0;  // more than 1 ms late
  double cpu_s = 0;        // onyx-load's CPU seconds over the level
  double send_rate = 0;    // requests sent per second of measured time
  std::map<std::string, int64_t> calls_per_peer;
  bool saturated = false, unstable = false;
  std::string saturated_reason, unstable_reason;
  bool slo_met = true;  // --find-max: every --slo criterion held
  std::vector<CriterionOutcome> slo;

  double late_share() const { return all.sent ? static_cast<double>(late_sends) / all.sent : 0; }
  double cpu_share() const { return measured_s > 0 ? cpu_s / measured_s : 0; }
};

// One second of the run (all models together), by completion time.
struct WindowPoint {
  double t_s = 0;
  int level = -1;  // -1: warm-up or between levels
  double target_rate = 0;
  int64_t sent = 0, ok = 0, failed = 0, dropped = 0;
  int64_t p50 = 0, p99 = 0, max = 0;  // response time, ns
  int64_t service_p99 = 0;
  int64_t inflight = 0, queued = 0;  // at the window's end
  double cpu_share = 0;              // onyx-load's CPU, cores
  int64_t rss_bytes = 0;             // onyx-load's resident memory
};

// One scrape of the servers' /metrics, summed over replicas.
struct ServerPoint {
  double t_s = 0;
  std::string model;
  double queue_depth = 0, inflight = 0, arena_in_use = 0, arena_reserved = 0;
  double requests_total = 0;
};

struct FindMaxResult {
  bool ran = false;
  bool found = false;
  double max_rate = 0;  // highest probed rate that met every --slo criterion
  int level = -1;       // its level index
};

struct RunResult {
  int format_version = 1;
  std::vector<std::pair<std::string, std::string>> config;  // flag -> value, as given
  std::string command_line;
  std::map<std::string, std::string> host;    // hostname, cores, kernel, onyx-load version
  std::map<std::string, std::string> server;  // ServerMetadata: name, version, extensions
  std::vector<double> percentiles;            // the report's quantiles, in (0, 1)
  std::vector<LevelResult> levels;
  std::vector<WindowPoint> windows;
  std::vector<ServerPoint> server_series;
  FindMaxResult find_max;
  std::vector<CriterionOutcome> asserts;
  std::string started_at;  // UTC, ISO 8601
  double wall_s = 0;
  int exit_code = 0;
  std::string verdict;             // "ok", "assertion failed", ...
  std::vector<std::string> notes;  // e.g. why the target was unreachable
};

}  // namespace onyx::load
