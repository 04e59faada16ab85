#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "loadtest/prom_text.h"
#include "loadtest/report.h"
#include "loadtest/units.h"
#include "loadtest/waterfall.h"

namespace onyx::load {
namespace {

std::string Latencies(const HistogramData& d, const std::vector<double>& qs) {
  if (d.count == 0) return "(no successful replies)";
  const Histogram h = d.Build();
  std::string out;
  for (double q : qs) absl::StrAppend(&out, PercentileName(q), " ", FormatNs(h.Percentile(q)), "  ");
  absl::StrAppend(&out, "max ", FormatNs(d.max), "  mean ", FormatNs(d.mean()));
  return out;
}

std::string ServerQuantile(const ServerHistogram& h, double q) {
  double low = 0, high = 0;
  const double v = HistogramQuantile(h, q, &low, &high);
  return absl::StrCat(PercentileName(q), " ", FormatNs(v * 1e9), " (bucket ", FormatNs(low * 1e9), "-",
                      std::isinf(high) ? "+Inf" : FormatNs(high * 1e9), ")");
}

std::string Bytes(double b) {
  if (b >= 1 << 30) return absl::StrFormat("%.2f GiB", b / (1 << 30));
  if (b >= 1 << 20) return absl::StrFormat("%.1f MiB", b / (1 << 20));
  if (b >= 1 << 10) return absl::StrFormat("%.1f KiB", b / (1 << 10));
  return absl::StrFormat("%.0f B", b);
}

void ModelBlock(const ModelLevelResult& m, const std::vector<double>& qs, std::string* out) {
  absl::StrAppendFormat(out,
                        "  requests: intended %lld  sent %lld  ok %lld  failed %lld  dropped %lld  err %s  "
                        "throughput %s/s\n",
                        static_cast<long long>(m.intended), static_cast<long long>(m.sent),
                        static_cast<long long>(m.ok), static_cast<long long>(m.failed),
                        static_cast<long long>(m.dropped), FormatPercent(m.error_share()), FormatCount(m.throughput));
  absl::StrAppend(out, "  response time (from intended send): ", Latencies(m.response, qs), "\n");
  absl::StrAppend(out, "  service time (from actual send):    ", Latencies(m.service, qs), "\n");
  for (const ErrorGroup& g : m.errors) {
    absl::StrAppendFormat(out, "  errors %s x%lld:", g.code, static_cast<long long>(g.count));
    for (const auto& [message, n] : g.messages) absl::StrAppendFormat(out, " \"%s\" (%lld)", message, n);
    out->append("\n");
  }
  if (m.dropped > 0)
    absl::StrAppendFormat(out, "  dropped at --max-inflight: %lld\n", static_cast<long long>(m.dropped));
  const ServerModelLevel& s = m.server;
  if (s.have_metrics && !s.request.empty()) {
    absl::StrAppend(out, "  server (/metrics): request ", ServerQuantile(s.request, 0.5), ", ",
                    ServerQuantile(s.request, 0.99), "\n");
    if (!s.queue.empty()) {
      absl::StrAppend(out, "                     queue ", ServerQuantile(s.queue, 0.5), ", ",
                      ServerQuantile(s.queue, 0.99), "\n");
    }
    if (!s.compute.empty()) {
      absl::StrAppend(out, "                     compute ", ServerQuantile(s.compute, 0.5), ", ",
                      ServerQuantile(s.compute, 0.99), "\n");
    }
    absl::StrAppendFormat(out,
                          "                     batch: %.2f requests, %.2f rows per run (mean); queue depth "
                          "max %.0f; in flight max %.0f\n",
                          s.batch_requests.count > 0 ? s.batch_requests.sum / s.batch_requests.count : 0.0,
                          s.batch_rows.count > 0 ? s.batch_rows.sum / s.batch_rows.count : 0.0, s.queue_depth_max,
                          s.inflight_max);
    absl::StrAppend(out, "                     arena in use ", Bytes(s.arena_in_use_max), ", reserved ",
                    Bytes(s.arena_reserved_max), " (max); CPU fallback nodes ", s.fallback_nodes, "\n");
  }
  if (s.have_stats && s.execution_count > 0) {
    absl::StrAppendFormat(out, "  server (ModelStatistics): %lld requests in %lld runs (%.2f per run)\n",
                          static_cast<long long>(s.inference_count), static_cast<long long>(s.execution_count),
                          static_cast<double>(s.inference_count) / s.execution_count);
  }
  const Waterfall w = ComputeWaterfall(m);
  if (w.valid) {
    absl::StrAppend(out, "  waterfall (means, ", w.source, "): client ", FormatNs(w.client_ns), " = network/gRPC ",
                    FormatNs(w.network_ns), " + server queue ", FormatNs(w.queue_ns), " + compute ",
                    FormatNs(w.compute_ns), " + other server ", FormatNs(w.other_ns), "\n");
  }
}

}  // namespace

std::string PercentileName(double q) {
  std::string s = absl::StrFormat("%.4f", q * 100);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return "p" + s;
}

std::string TextReport(const RunResult& r) {
  std::string out;
  absl::StrAppend(&out, "onyx-load ", r.host.count("onyx_load_version") ? r.host.at("onyx_load_version") : "", " -> ",
                  r.server.count("target") ? r.server.at("target") : "");
  if (r.server.count("name") && !r.server.at("name").empty()) {
    absl::StrAppend(&out, " (", r.server.at("name"), " ", r.server.at("version"), ")");
  }
  absl::StrAppend(&out, ", started ", r.started_at, "\n");
  for (const LevelResult& l : r.levels) {
    absl::StrAppendFormat(&out, "\n== level %d: %s  (%.1fs measured", l.index, l.label, l.measured_s);
    if (l.open_loop) absl::StrAppendFormat(&out, ", sent %s/s", FormatCount(l.send_rate));
    out += ")\n";
    if (l.models.size() > 1) {
      absl::StrAppend(&out, " all models:\n");
      ModelBlock(l.all, r.percentiles, &out);
      for (const ModelLevelResult& m : l.models) {
        absl::StrAppend(&out, " model ", m.model, ":\n");
        ModelBlock(m, r.percentiles, &out);
      }
    } else if (!l.models.empty()) {
      ModelBlock(l.models[0], r.percentiles, &out);
    }
    if (l.open_loop && l.send_lag.count > 0) {
      const Histogram lag = l.send_lag.Build();
      absl::StrAppend(&out, "  send lag: p50 ", FormatNs(lag.Percentile(0.5)), "  p99 ", FormatNs(lag.Percentile(0.99)),
                      "  max ", FormatNs(l.send_lag.max), "; ", FormatPercent(l.late_share()),
                      " of sends more than 1 ms late\n");
    }
    absl::StrAppendFormat(&out, "  onyx-load CPU: %.2f cores\n", l.cpu_share());
    for (const auto& [peer, n] : l.calls_per_peer) {
      absl::StrAppendFormat(&out, "  calls to %s: %lld\n", peer, static_cast<long long>(n));
    }
    if (l.saturated) absl::StrAppend(&out, "  SATURATED: ", l.saturated_reason, "\n");
    if (l.unstable) absl::StrAppend(&out, "  UNSTABLE: ", l.unstable_reason, "\n");
    for (const CriterionOutcome& c : l.slo) {
      absl::StrAppend(&out, "  slo ", c.text, ": ", c.met ? "met" : "MISSED", "\n");
    }
  }
  if (r.levels.size() > 1) {
    absl::StrAppend(&out,
                    "\nlevel  load                     throughput        p50        p99      p99.9        max"
                    "     err  flags\n");
    for (const LevelResult& l : r.levels) {
      const Histogram h = l.all.response.Build();
      std::string flags = absl::StrCat(l.saturated ? "S" : "", l.unstable ? "U" : "",
                                       r.find_max.ran ? (l.slo_met ? "slo-met" : "slo-missed") : "");
      absl::StrAppendFormat(&out, "%5d  %-22s %10s/s %10s %10s %10s %10s %7s  %s\n", l.index, l.label,
                            FormatCount(l.all.throughput), FormatNs(h.Percentile(0.5)), FormatNs(h.Percentile(0.99)),
                            FormatNs(h.Percentile(0.999)), FormatNs(l.all.response.max),
                            FormatPercent(l.all.error_share()), flags);
    }
  }
  if (r.find_max.ran) {
    if (r.find_max.found) {
      absl::StrAppend(&out, "\nfind-max: highest rate meeting the SLO: ", FormatCount(r.find_max.max_rate),
                      "/s (level ", r.find_max.level, ")\n");
    } else {
      absl::StrAppend(&out, "\nfind-max: no probed rate met the SLO\n");
    }
  }
  for (const CriterionOutcome& a : r.asserts) {
    if (!a.met) absl::StrAppend(&out, "assert ", a.text, " FAILED on ", a.level, "\n");
  }
  for (const std::string& n : r.notes) absl::StrAppend(&out, "note: ", n, "\n");
  absl::StrAppend(&out, "\nverdict: ", r.verdict, " (exit ", r.exit_code, ")\n");
  return out;
}

absl::Status WriteTextFile(absl::string_view flag, const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot write '", path, "'"));
  return absl::OkStatus();
}

}  // namespace onyx::load
