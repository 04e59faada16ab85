#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loadtest/html_page.h"
#include "loadtest/prom_text.h"
#include "loadtest/report.h"
#include "loadtest/svg_chart.h"
#include "loadtest/units.h"
#include "loadtest/waterfall.h"

namespace onyx::load {
namespace {

// The level the single-level charts show: --find-max's answer, else the last.
const LevelResult* MainLevel(const RunResult& r) {
  if (r.levels.empty()) return nullptr;
  if (r.find_max.found && r.find_max.level >= 0 && r.find_max.level < static_cast<int>(r.levels.size())) {
    return &r.levels[r.find_max.level];
  }
  return &r.levels.back();
}

// Up to `n` levels spread over the run, for charts with one line per level.
std::vector<const LevelResult*> SomeLevels(const RunResult& r, size_t n) {
  std::vector<const LevelResult*> out;
  const size_t total = r.levels.size();
  for (size_t i = 0; i < std::min(total, n); ++i) {
    out.push_back(&r.levels[total <= n ? i : i * (total - 1) / (n - 1)]);
  }
  return out;
}

std::string WindowCharts(const RunResult& r) {
  ChartSeries p50{"p50", kPalette[0], {}}, p99{"p99", kPalette[1], {}}, mx{"max", kPalette[3], {}};
  ChartSeries target{"target rate", "#888888", {}, true}, sent{"sent/s", kPalette[0], {}}, ok{"ok/s", kPalette[2], {}};
  ChartSeries errors{"errors/s", kPalette[1], {}}, inflight{"in flight", kPalette[4], {}};
  double previous = 0;
  for (const WindowPoint& w : r.windows) {
    const double dt = w.t_s - previous > 0.05 ? w.t_s - previous : 1.0;
    previous = w.t_s;
    if (w.ok > 0) {
      p50.points.emplace_back(w.t_s, static_cast<double>(w.p50));
      p99.points.emplace_back(w.t_s, static_cast<double>(w.p99));
      mx.points.emplace_back(w.t_s, static_cast<double>(w.max));
    }
    if (w.target_rate > 0) target.points.emplace_back(w.t_s, w.target_rate);
    sent.points.emplace_back(w.t_s, w.sent / dt);
    ok.points.emplace_back(w.t_s, w.ok / dt);
    errors.points.emplace_back(w.t_s, (w.failed + w.dropped) / dt);
    inflight.points.emplace_back(w.t_s, static_cast<double>(w.inflight + w.queued));
  }
  ChartSpec lat{"latency_over_time", "Response time over time (per second, from intended send)", "time (s)",
                "response time"};
  lat.log_y = true;
  lat.y_format = FormatNsTick;
  ChartSpec tput{"throughput_over_time", "Throughput over time", "time (s)", "requests/s"};
  tput.y_format = FormatCountTick;
  ChartSpec err{"errors_inflight_over_time", "Errors and requests in flight over time", "time (s)",
                "errors/s, requests"};
  err.y_format = FormatCountTick;
  std::vector<ChartSeries> rate_series = {sent, ok};
  if (!target.points.empty()) rate_series.insert(rate_series.begin(), target);
  return absl::StrCat("<h2>Over time</h2>\n", LineChart(lat, {p50, p99, mx}), LineChart(tput, rate_series),
                      LineChart(err, {errors, inflight}));
}

std::string DistributionCharts(const RunResult& r) {
  std::vector<ChartSeries> curves;
  double nines = 1;
  const std::vector<const LevelResult*> shown = SomeLevels(r, 8);
  for (size_t i = 0; i < shown.size(); ++i) {
    ChartSeries s{absl::StrCat(shown[i]->label, " response"), kPalette[i % kPalette.size()],
                  PercentileCurve(shown[i]->all.response)};
    if (!s.points.empty()) nines = std::max(nines, s.points.back().first);
    curves.push_back(std::move(s));
  }
  const LevelResult* main = MainLevel(r);
  if (main != nullptr && shown.size() == 1) {
    curves.push_back({absl::StrCat(main->label, " service"), kPalette[1], PercentileCurve(main->all.service), true});
  }
  ChartSpec pc{"percentile_curve", "Percentile curve", "percentile", "latency"};
  pc.log_y = true;
  pc.y_format = FormatNsTick;
  pc.x_ticks = NinesTicks(nines);
  // Histogram of the main level, regrouped into 20 bins per decade.
  std::vector<Bar> bars;
  if (main != nullptr) {
    std::map<int, double> bins;
    for (const auto& [index, n] : main->all.response.buckets) {
      const double mid = Histogram::LowerBound(index) + Histogram::Width(index) / 2.0;
      bins[static_cast<int>(std::floor(std::log10(std::max(mid, 1.0)) * 20))] += static_cast<double>(n);
    }
    for (const auto& [bin, n] : bins) bars.push_back({std::pow(10, bin / 20.0), std::pow(10, (bin + 1) / 20.0), n});
  }
  ChartSpec hist{"histogram", absl::StrCat("Response-time histogram", main ? ": " + main->label : ""), "response time",
                 "requests"};
  hist.log_x = true;
  hist.x_format = FormatNsTick;
  hist.y_format = FormatCountTick;
  return absl::StrCat("<h2>Distribution</h2>\n", LineChart(pc, curves), BarChart(hist, kPalette[0], bars));
}

std::string SweepChart(const RunResult& r) {
  ChartSeries p99{"p99", kPalette[1], {}, false, true}, p50{"p50", kPalette[0], {}, false, true};
  for (const LevelResult& l : r.levels) {
    if (l.all.response.count == 0) continue;
    const Histogram h = l.all.response.Build();
    p99.points.emplace_back(l.all.throughput, static_cast<double>(h.Percentile(0.99)));
    p50.points.emplace_back(l.all.throughput, static_cast<double>(h.Percentile(0.5)));
  }
  ChartSpec s{"sweep_curve", "Throughput vs response time (one point per level)", "throughput (requests/s)",
              "response time"};
  s.log_y = true;
  s.y_format = FormatNsTick;
  s.x_format = FormatCountTick;
  return absl::StrCat("<h2>Sweep</h2>\n", LineChart(s, {p50, p99}));
}

std::string ServerCharts(const RunResult& r) {
  std::set<std::string> models;
  for (const ServerPoint& p : r.server_series) models.insert(p.model);
  std::vector<ChartSeries> load, memory;
  int i = 0;
  for (const std::string& m : models) {
    ChartSeries depth{absl::StrCat(m, " queue depth"), kPalette[i % 8], {}},
        inflight{absl::StrCat(m, " in flight"), kPalette[(i + 1) % 8], {}, true},
        in_use{absl::StrCat(m, " arena in use"), kPalette[i % 8], {}},
        reserved{absl::StrCat(m, " arena reserved"), kPalette[(i + 1) % 8], {}, true};
    for (const ServerPoint& p : r.server_series) {
      if (p.model != m) continue;
      depth.points.emplace_back(p.t_s, p.queue_depth);
      inflight.points.emplace_back(p.t_s, p.inflight);
      in_use.points.emplace_back(p.t_s, p.arena_in_use);
      reserved.points.emplace_back(p.t_s, p.arena_reserved);
    }
    load.push_back(depth);
    load.push_back(inflight);
    memory.push_back(in_use);
    memory.push_back(reserved);
    i += 2;
  }
  ChartSpec a{"server_load", "Server: queue depth and requests in flight (scraped)", "time (s)", "requests"};
  ChartSpec b{"server_memory", "Server: arena bytes (scraped)", "time (s)", "bytes"};
  b.y_format = FormatBytesTick;
  return absl::StrCat("<h2>Server</h2>\n", LineChart(a, load), LineChart(b, memory));
}

std::string WaterfallChart(const RunResult& r) {
  std::vector<StackRow> rows;
  for (const LevelResult& l : r.levels) {
    for (const ModelLevelResult& m : l.models) {
      const Waterfall w = ComputeWaterfall(m);
      if (!w.valid) continue;
      rows.push_back({absl::StrCat(l.models.size() > 1 ? m.model + " " : "", l.label),
                      {{"network/gRPC", std::max(0.0, w.network_ns)},
                       {"queue", w.queue_ns},
                       {"compute", w.compute_ns},
                       {"other server", w.other_ns}}});
    }
  }
  ChartSpec s{"waterfall", "Waterfall: mean client service time, split by where it went", "mean time", ""};
  s.x_format = FormatNsTick;
  return absl::StrCat("<h2>Waterfall</h2>\n", StackedBars(s, rows, {"#9e9e9e", kPalette[3], kPalette[0], "#bcbd22"}));
}

std::string Tables(const RunResult& r) {
  std::string out =
      "<h2>Levels</h2>\n<table>\n<tr><th class=\"l\">level</th><th class=\"l\">model</th>"
      "<th>throughput/s</th><th>sent/s</th>";
  for (double q : r.percentiles) absl::StrAppend(&out, "<th>", PercentileName(q), "</th>");
  absl::StrAppend(&out,
                  "<th>max</th><th>service p99</th><th>err</th><th>late sends</th><th class=\"l\">flags</th></tr>\n");
  for (const LevelResult& l : r.levels) {
    std::vector<const ModelLevelResult*> rows = {&l.all};
    if (l.models.size() > 1) {
      for (const ModelLevelResult& m : l.models) rows.push_back(&m);
    }
    for (const ModelLevelResult* m : rows) {
      const Histogram h = m->response.Build(), s = m->service.Build();
      absl::StrAppend(&out, "<tr><td class=\"l\">", HtmlEscape(l.label), "</td><td class=\"l\">", HtmlEscape(m->model),
                      "</td><td>", FormatCount(m->throughput), "</td><td>", FormatCount(l.send_rate), "</td>");
      for (double q : r.percentiles) absl::StrAppend(&out, "<td>", FormatNs(h.Percentile(q)), "</td>");
      absl::StrAppend(&out, "<td>", FormatNs(m->response.max), "</td><td>", FormatNs(s.Percentile(0.99)), "</td><td>",
                      FormatPercent(m->error_share()), "</td><td>", FormatPercent(l.late_share()),
                      "</td><td class=\"l\">", l.saturated ? "saturated " : "", l.unstable ? "unstable " : "",
                      r.find_max.ran ? (l.slo_met ? "slo met" : "slo missed") : "", "</td></tr>\n");
    }
  }
  out += "</table>\n";
  bool any_errors = false;
  for (const LevelResult& l : r.levels) any_errors = any_errors || !l.all.errors.empty();
  if (any_errors) {
    out +=
        "<h2>Errors</h2>\n<table>\n<tr><th class=\"l\">level</th><th class=\"l\">code</th><th>count</th>"
        "<th class=\"l\">top messages</th></tr>\n";
    for (const LevelResult& l : r.levels) {
      for (const ErrorGroup& g : l.all.errors) {
        std::string messages;
        for (const auto& [m, n] : g.messages) absl::StrAppend(&messages, HtmlEscape(m), " (", n, ")<br>");
        absl::StrAppend(&out, "<tr><td class=\"l\">", HtmlEscape(l.label), "</td><td class=\"l\">", g.code, "</td><td>",
                        g.count, "</td><td class=\"l\">", messages, "</td></tr>\n");
      }
    }
    out += "</table>\n";
  }
  out += "<h2>Configuration</h2>\n<table>\n";
  for (const auto& [flag, value] : r.config) {
    absl::StrAppend(&out, "<tr><td class=\"l\">", HtmlEscape(flag), "</td><td class=\"l\">", HtmlEscape(value),
                    "</td></tr>\n");
  }
  for (const auto& [k, v] : r.host) {
    absl::StrAppend(&out, "<tr><td class=\"l\">host ", HtmlEscape(k), "</td><td class=\"l\">", HtmlEscape(v),
                    "</td></tr>\n");
  }
  for (const auto& [k, v] : r.server) {
    absl::StrAppend(&out, "<tr><td class=\"l\">server ", HtmlEscape(k), "</td><td class=\"l\">", HtmlEscape(v),
                    "</td></tr>\n");
  }
  out += "</table>\n";
  return out;
}

}  // namespace

std::string HtmlReport(const RunResult& r) {
  std::string out = PageStart("onyx-load report");
  absl::StrAppend(&out, "<h1>onyx-load: <span class=\"", r.exit_code == 0 ? "ok" : "bad", "\">", HtmlEscape(r.verdict),
                  "</span> (exit ", r.exit_code, ")</h1>\n<p>", HtmlEscape(r.command_line), "<br>started ",
                  HtmlEscape(r.started_at), ", ", absl::StrFormat("%.1f", r.wall_s), " s; target ",
                  HtmlEscape(r.server.count("target") ? r.server.at("target") : ""), "</p>\n");
  if (r.find_max.ran) {
    absl::StrAppend(&out, "<p>find-max: ",
                    r.find_max.found
                        ? absl::StrCat("highest rate meeting the SLO: <b>", FormatCount(r.find_max.max_rate), "/s</b>")
                        : std::string("no probed rate met the SLO"),
                    "</p>\n");
  }
  for (const LevelResult& l : r.levels) {
    if (l.saturated)
      absl::StrAppend(&out, "<p class=\"bad\">", HtmlEscape(l.label), " saturated: ", HtmlEscape(l.saturated_reason),
                      "</p>\n");
    if (l.unstable)
      absl::StrAppend(&out, "<p class=\"bad\">", HtmlEscape(l.label), " unstable: ", HtmlEscape(l.unstable_reason),
                      "</p>\n");
  }
  for (const CriterionOutcome& a : r.asserts) {
    absl::StrAppend(&out, "<p class=\"", a.met ? "ok" : "bad", "\">assert ", HtmlEscape(a.text), " on ",
                    HtmlEscape(a.level), ": ", a.met ? "met" : "FAILED", "</p>\n");
  }
  for (const std::string& n : r.notes) absl::StrAppend(&out, "<p>note: ", HtmlEscape(n), "</p>\n");
  absl::StrAppend(&out, Tables(r), WindowCharts(r), DistributionCharts(r), SweepChart(r), ServerCharts(r),
                  WaterfallChart(r), PageEnd());
  return out;
}

}  // namespace onyx::load
