#include "absl/strings/str_cat.h"
#include "loadtest/json_writer.h"
#include "loadtest/report.h"
#include "loadtest/waterfall.h"

namespace onyx::load {
namespace {

void WriteHistogram(JsonWriter& j, const HistogramData& d, const std::vector<double>& qs) {
  j.BeginObject();
  j.Field("count", d.count);
  j.Field("min_ns", d.min);
  j.Field("max_ns", d.max);
  j.Field("mean_ns", d.mean());
  j.Field("sum_ns", d.sum);
  j.Key("percentiles_ns");
  j.BeginObject();
  if (d.count > 0) {
    const Histogram h = d.Build();
    for (double q : qs) j.Field(PercentileName(q), h.Percentile(q));
  }
  j.EndObject();
  // [lowest value, width, count] of every non-empty bucket, in ns.
  j.Key("buckets");
  j.BeginArray();
  for (const auto& [index, n] : d.buckets) {
    j.BeginArray();
    j.Int(Histogram::LowerBound(index));
    j.Int(Histogram::Width(index));
    j.Int(n);
    j.EndArray();
  }
  j.EndArray();
  j.EndObject();
}

void WriteServerHistogram(JsonWriter& j, absl::string_view key, const ServerHistogram& h) {
  j.Key(key);
  j.BeginObject();
  j.Field("count", h.count);
  j.Field("sum", h.sum);
  j.Key("buckets");  // [upper bound (le), cumulative count]; +Inf is null
  j.BeginArray();
  for (size_t i = 0; i < h.le.size(); ++i) {
    j.BeginArray();
    j.Double(h.le[i]);
    j.Double(h.cumulative[i]);
    j.EndArray();
  }
  j.EndArray();
  j.EndObject();
}

void WriteModel(JsonWriter& j, const ModelLevelResult& m, const std::vector<double>& qs) {
  j.BeginObject();
  j.Field("model", m.model);
  j.Field("intended", m.intended);
  j.Field("sent", m.sent);
  j.Field("ok", m.ok);
  j.Field("failed", m.failed);
  j.Field("dropped", m.dropped);
  j.Field("error_share", m.error_share());
  j.Field("throughput", m.throughput);
  j.Key("response");
  WriteHistogram(j, m.response, qs);
  j.Key("service");
  WriteHistogram(j, m.service, qs);
  j.Key("errors");
  j.BeginArray();
  for (const ErrorGroup& g : m.errors) {
    j.BeginObject();
    j.Field("code", g.code);
    j.Field("count", g.count);
    j.Key("messages");
    j.BeginArray();
    for (const auto& [message, n] : g.messages) {
      j.BeginObject();
      j.Field("message", message);
      j.Field("count", n);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  const ServerModelLevel& s = m.server;
  j.Key("server");
  j.BeginObject();
  j.Field("have_metrics", s.have_metrics);
  if (s.have_metrics) {
    WriteServerHistogram(j, "request_duration_seconds", s.request);
    WriteServerHistogram(j, "queue_duration_seconds", s.queue);
    WriteServerHistogram(j, "compute_duration_seconds", s.compute);
    WriteServerHistogram(j, "batch_requests", s.batch_requests);
    WriteServerHistogram(j, "batch_rows", s.batch_rows);
    j.Field("queue_depth_max", s.queue_depth_max);
    j.Field("inflight_max", s.inflight_max);
    j.Field("arena_in_use_bytes_max", s.arena_in_use_max);
    j.Field("arena_reserved_bytes_max", s.arena_reserved_max);
    j.Field("cpu_fallback_nodes", s.fallback_nodes);
  }
  j.Field("have_model_statistics", s.have_stats);
  if (s.have_stats) {
    j.Field("success_count", s.success_count);
    j.Field("inference_count", s.inference_count);
    j.Field("execution_count", s.execution_count);
    j.Field("success_ns", s.success_ns);
    j.Field("queue_ns", s.queue_ns);
    j.Field("compute_input_ns", s.compute_input_ns);
    j.Field("compute_infer_ns", s.compute_infer_ns);
    j.Field("compute_output_ns", s.compute_output_ns);
  }
  j.EndObject();
  const Waterfall w = ComputeWaterfall(m);
  j.Key("waterfall");
  if (w.valid) {
    j.BeginObject();
    j.Field("source", w.source);
    j.Field("client_ns", w.client_ns);
    j.Field("network_ns", w.network_ns);
    j.Field("queue_ns", w.queue_ns);
    j.Field("compute_ns", w.compute_ns);
    j.Field("other_server_ns", w.other_ns);
    j.EndObject();
  } else {
    j.Null();
  }
  j.EndObject();
}

void WriteOutcomes(JsonWriter& j, const std::vector<CriterionOutcome>& v) {
  j.BeginArray();
  for (const CriterionOutcome& c : v) {
    j.BeginObject();
    j.Field("text", c.text);
    j.Field("level", c.level);
    j.Field("measured", c.measured);
    j.Field("met", c.met);
    j.EndObject();
  }
  j.EndArray();
}

}  // namespace

std::string JsonReport(const RunResult& r) {
  JsonWriter j;
  j.BeginObject();
  j.Field("format", "onyx-load");
  j.Field("format_version", r.format_version);
  j.Field("started_at", r.started_at);
  j.Field("wall_s", r.wall_s);
  j.Field("exit_code", r.exit_code);
  j.Field("verdict", r.verdict);
  j.Key("config");  // [flag, value] in command-line order
  j.BeginArray();
  for (const auto& [flag, value] : r.config) {
    j.BeginArray();
    j.String(flag);
    j.String(value);
    j.EndArray();
  }
  j.EndArray();
  j.Key("host");
  j.BeginObject();
  for (const auto& [k, v] : r.host) j.Field(k, v);
  j.EndObject();
  j.Key("server");
  j.BeginObject();
  for (const auto& [k, v] : r.server) j.Field(k, v);
  j.EndObject();
  j.Key("percentiles");
  j.BeginArray();
  for (double q : r.percentiles) j.Double(q);
  j.EndArray();
  j.Key("notes");
  j.BeginArray();
  for (const std::string& n : r.notes) j.String(n);
  j.EndArray();
  j.Key("find_max");
  j.BeginObject();
  j.Field("ran", r.find_max.ran);
  j.Field("found", r.find_max.found);
  j.Field("max_rate", r.find_max.max_rate);
  j.Field("level", r.find_max.level);
  j.EndObject();
  j.Key("asserts");
  WriteOutcomes(j, r.asserts);
  j.Key("levels");
  j.BeginArray();
  for (const LevelResult& l : r.levels) {
    j.BeginObject();
    j.Field("index", l.index);
    j.Field("label", l.label);
    j.Field("open_loop", l.open_loop);
    j.Field("target_rate", l.target_rate);
    j.Field("target_rate_end", l.target_rate_end);
    j.Field("concurrency", l.concurrency);
    j.Field("start_s", l.start_s);
    j.Field("measured_s", l.measured_s);
    j.Field("send_rate", l.send_rate);
    j.Field("cpu_s", l.cpu_s);
    j.Field("cpu_share", l.cpu_share());
    j.Field("late_sends", l.late_sends);
    j.Field("late_share", l.late_share());
    j.Field("saturated", l.saturated);
    j.Field("saturated_reason", l.saturated_reason);
    j.Field("unstable", l.unstable);
    j.Field("unstable_reason", l.unstable_reason);
    j.Field("slo_met", l.slo_met);
    j.Key("slo");
    WriteOutcomes(j, l.slo);
    j.Key("calls_per_peer");
    j.BeginObject();
    for (const auto& [peer, n] : l.calls_per_peer) j.Field(peer, n);
    j.EndObject();
    j.Key("send_lag");
    WriteHistogram(j, l.send_lag, r.percentiles);
    j.Key("all");
    WriteModel(j, l.all, r.percentiles);
    j.Key("models");
    j.BeginArray();
    for (const ModelLevelResult& m : l.models) WriteModel(j, m, r.percentiles);
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.Key("windows");
  j.BeginArray();
  for (const WindowPoint& w : r.windows) {
    j.BeginObject();
    j.Field("t_s", w.t_s);
    j.Field("level", w.level);
    j.Field("target_rate", w.target_rate);
    j.Field("sent", w.sent);
    j.Field("ok", w.ok);
    j.Field("failed", w.failed);
    j.Field("dropped", w.dropped);
    j.Field("p50_ns", w.p50);
    j.Field("p99_ns", w.p99);
    j.Field("max_ns", w.max);
    j.Field("service_p99_ns", w.service_p99);
    j.Field("inflight", w.inflight);
    j.Field("queued", w.queued);
    j.Field("cpu_share", w.cpu_share);
    j.Field("rss_bytes", w.rss_bytes);
    j.EndObject();
  }
  j.EndArray();
  j.Key("server_series");
  j.BeginArray();
  for (const ServerPoint& p : r.server_series) {
    j.BeginObject();
    j.Field("t_s", p.t_s);
    j.Field("model", p.model);
    j.Field("queue_depth", p.queue_depth);
    j.Field("inflight", p.inflight);
    j.Field("arena_in_use_bytes", p.arena_in_use);
    j.Field("arena_reserved_bytes", p.arena_reserved);
    j.Field("requests_total", p.requests_total);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  return j.Take() + "\n";
}

std::string CsvReport(const RunResult& r) {
  std::string out =
      "level,label,model,target_rate,concurrency,measured_s,intended,sent,ok,failed,dropped,"
      "error_share,throughput,send_rate,late_share";
  for (double q : r.percentiles) absl::StrAppend(&out, ",response_", PercentileName(q), "_us");
  absl::StrAppend(&out, ",response_max_us,response_mean_us");
  for (double q : r.percentiles) absl::StrAppend(&out, ",service_", PercentileName(q), "_us");
  absl::StrAppend(&out, ",service_max_us,saturated,unstable\n");
  const auto row = [&](const LevelResult& l, const ModelLevelResult& m) {
    std::string label = l.label;
    for (char& c : label) {
      if (c == ',') c = ';';
    }
    absl::StrAppend(&out, l.index, ",", label, ",", m.model, ",", l.target_rate, ",", l.concurrency, ",", l.measured_s,
                    ",", m.intended, ",", m.sent, ",", m.ok, ",", m.failed, ",", m.dropped, ",", m.error_share(), ",",
                    m.throughput, ",", l.send_rate, ",", l.late_share());
    const Histogram resp = m.response.Build(), serv = m.service.Build();
    for (double q : r.percentiles) absl::StrAppend(&out, ",", resp.Percentile(q) / 1e3);
    absl::StrAppend(&out, ",", m.response.max / 1e3, ",", m.response.mean() / 1e3);
    for (double q : r.percentiles) absl::StrAppend(&out, ",", serv.Percentile(q) / 1e3);
    absl::StrAppend(&out, ",", m.service.max / 1e3, ",", l.saturated ? 1 : 0, ",", l.unstable ? 1 : 0, "\n");
  };
  for (const LevelResult& l : r.levels) {
    row(l, l.all);
    if (l.models.size() > 1) {
      for (const ModelLevelResult& m : l.models) row(l, m);
    }
  }
  return out;
}

}  // namespace onyx::load
