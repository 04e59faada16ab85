#include "loadtest/compare.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "loadtest/data_files.h"
#include "loadtest/html_page.h"
#include "loadtest/report.h"
#include "loadtest/status_macros.h"
#include "loadtest/svg_chart.h"
#include "loadtest/units.h"
#include "loadtest/verdict.h"

namespace onyx::load {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

const Value* Get(const Struct& s, const char* key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? nullptr : &it->second;
}
double Num(const Struct& s, const char* key) {
  const Value* v = Get(s, key);
  return v != nullptr ? v->number_value() : 0;
}
std::string Str(const Struct& s, const char* key) {
  const Value* v = Get(s, key);
  return v != nullptr ? v->string_value() : "";
}
bool Flag(const Struct& s, const char* key) {
  const Value* v = Get(s, key);
  return v != nullptr && v->bool_value();
}
const Struct& Obj(const Struct& s, const char* key) {
  const Value* v = Get(s, key);
  return v != nullptr ? v->struct_value() : Struct::default_instance();
}
const google::protobuf::ListValue& List(const Struct& s, const char* key) {
  const Value* v = Get(s, key);
  return v != nullptr ? v->list_value() : google::protobuf::ListValue::default_instance();
}

HistogramData ReadHistogram(const Struct& h) {
  HistogramData d;
  d.count = static_cast<int64_t>(Num(h, "count"));
  d.min = static_cast<int64_t>(Num(h, "min_ns"));
  d.max = static_cast<int64_t>(Num(h, "max_ns"));
  d.sum = Num(h, "sum_ns");
  for (const Value& b : List(h, "buckets").values()) {
    const auto& v = b.list_value().values();
    if (v.size() < 3) continue;
    d.buckets.emplace_back(Histogram::IndexOf(static_cast<int64_t>(v[0].number_value())),
                           static_cast<int64_t>(v[2].number_value()));
  }
  return d;
}

ModelLevelResult ReadModel(const Struct& m) {
  ModelLevelResult r;
  r.model = Str(m, "model");
  r.intended = static_cast<int64_t>(Num(m, "intended"));
  r.sent = static_cast<int64_t>(Num(m, "sent"));
  r.ok = static_cast<int64_t>(Num(m, "ok"));
  r.failed = static_cast<int64_t>(Num(m, "failed"));
  r.dropped = static_cast<int64_t>(Num(m, "dropped"));
  r.throughput = Num(m, "throughput");
  r.response = ReadHistogram(Obj(m, "response"));
  r.service = ReadHistogram(Obj(m, "service"));
  return r;
}

std::string Delta(double a, double b) {
  if (a == 0) return b == 0 ? "" : "new";
  return absl::StrFormat("%+.1f%%", (b - a) / a * 100);
}

// Levels of A and B paired by position (the same command line sweeps the same levels).
size_t Pairs(const RunResult& a, const RunResult& b) { return std::min(a.levels.size(), b.levels.size()); }

}  // namespace

absl::StatusOr<RunResult> ReadJsonReport(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  Struct root;
  if (auto s = google::protobuf::util::JsonStringToMessage(text, &root); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON: ", s.message().as_string()));
  }
  if (Str(root, "format") != "onyx-load" || Num(root, "format_version") != 1) {
    return absl::InvalidArgumentError(absl::StrCat(path,
                                                   ": expected an onyx-load --json file (format \"onyx-load\", "
                                                   "format_version 1), got format \"",
                                                   Str(root, "format"), "\" version ", Num(root, "format_version")));
  }
  RunResult r;
  r.started_at = Str(root, "started_at");
  r.exit_code = static_cast<int>(Num(root, "exit_code"));
  r.verdict = Str(root, "verdict");
  for (const Value& q : List(root, "percentiles").values()) r.percentiles.push_back(q.number_value());
  for (const auto& [k, v] : Obj(root, "server").fields()) r.server[k] = v.string_value();
  for (const auto& [k, v] : Obj(root, "host").fields()) r.host[k] = v.string_value();
  for (const Value& c : List(root, "config").values()) {
    const auto& pair = c.list_value().values();
    if (pair.size() == 2) r.config.emplace_back(pair[0].string_value(), pair[1].string_value());
  }
  const Struct& fm = Obj(root, "find_max");
  r.find_max.ran = Flag(fm, "ran");
  r.find_max.found = Flag(fm, "found");
  r.find_max.max_rate = Num(fm, "max_rate");
  r.find_max.level = static_cast<int>(Num(fm, "level"));
  for (const Value& lv : List(root, "levels").values()) {
    const Struct& l = lv.struct_value();
    LevelResult level;
    level.index = static_cast<int>(Num(l, "index"));
    level.label = Str(l, "label");
    level.open_loop = Flag(l, "open_loop");
    level.target_rate = Num(l, "target_rate");
    level.concurrency = static_cast<int>(Num(l, "concurrency"));
    level.measured_s = Num(l, "measured_s");
    level.send_rate = Num(l, "send_rate");
    level.saturated = Flag(l, "saturated");
    level.unstable = Flag(l, "unstable");
    level.slo_met = Flag(l, "slo_met");
    level.all = ReadModel(Obj(l, "all"));
    for (const Value& m : List(l, "models").values()) level.models.push_back(ReadModel(m.struct_value()));
    r.levels.push_back(std::move(level));
  }
  for (const Value& wv : List(root, "windows").values()) {
    const Struct& w = wv.struct_value();
    WindowPoint p;
    p.t_s = Num(w, "t_s");
    p.level = static_cast<int>(Num(w, "level"));
    p.ok = static_cast<int64_t>(Num(w, "ok"));
    p.p50 = static_cast<int64_t>(Num(w, "p50_ns"));
    p.p99 = static_cast<int64_t>(Num(w, "p99_ns"));
    p.max = static_cast<int64_t>(Num(w, "max_ns"));
    r.windows.push_back(p);
  }
  return r;
}

std::string CompareText(const RunResult& a, const std::string& a_name, const RunResult& b, const std::string& b_name) {
  std::string out = absl::StrCat("A: ", a_name, " (", a.started_at, ", ", a.verdict, ")\nB: ", b_name, " (",
                                 b.started_at, ", ", b.verdict, ")\n");
  if (a.levels.size() != b.levels.size()) {
    absl::StrAppend(&out, "note: A has ", a.levels.size(), " levels, B has ", b.levels.size(), "; the first ",
                    Pairs(a, b), " are compared\n");
  }
  const std::vector<double> qs = {0.5, 0.9, 0.99, 0.999};
  for (size_t i = 0; i < Pairs(a, b); ++i) {
    const LevelResult &la = a.levels[i], &lb = b.levels[i];
    absl::StrAppend(&out, "\nlevel ", i, ": A ", la.label, " | B ", lb.label, "\n");
    absl::StrAppendFormat(&out, "  %-12s %12s %12s %9s\n", "", "A", "B", "B vs A");
    absl::StrAppendFormat(&out, "  %-12s %12s %12s %9s\n", "throughput/s", FormatCount(la.all.throughput),
                          FormatCount(lb.all.throughput), Delta(la.all.throughput, lb.all.throughput));
    const Histogram ha = la.all.response.Build(), hb = lb.all.response.Build();
    for (double q : qs) {
      const double va = static_cast<double>(ha.Percentile(q)), vb = static_cast<double>(hb.Percentile(q));
      absl::StrAppendFormat(&out, "  %-12s %12s %12s %9s\n", PercentileName(q), FormatNs(va), FormatNs(vb),
                            Delta(va, vb));
    }
    absl::StrAppendFormat(&out, "  %-12s %12s %12s %9s\n", "max", FormatNs(la.all.response.max),
                          FormatNs(lb.all.response.max), Delta(la.all.response.max, lb.all.response.max));
    absl::StrAppendFormat(&out, "  %-12s %12s %12s\n", "err", FormatPercent(la.all.error_share()),
                          FormatPercent(lb.all.error_share()));
  }
  if (a.find_max.ran || b.find_max.ran) {
    absl::StrAppend(&out, "\nfind-max: A ", a.find_max.found ? FormatCount(a.find_max.max_rate) + "/s" : "none", ", B ",
                    b.find_max.found ? FormatCount(b.find_max.max_rate) + "/s" : "none",
                    a.find_max.found && b.find_max.found
                        ? absl::StrCat(" (", Delta(a.find_max.max_rate, b.find_max.max_rate), ")")
                        : "",
                    "\n");
  }
  return out;
}

std::string CompareHtml(const RunResult& a, const std::string& a_name, const RunResult& b, const std::string& b_name) {
  std::string out = PageStart("onyx-load compare");
  absl::StrAppend(&out, "<h1>onyx-load compare</h1>\n<p>A (solid): ", HtmlEscape(a_name), ", ",
                  HtmlEscape(a.started_at), "<br>B (dashed): ", HtmlEscape(b_name), ", ", HtmlEscape(b.started_at),
                  "</p>\n<pre>", HtmlEscape(CompareText(a, a_name, b, b_name)), "</pre>\n");
  std::vector<ChartSeries> curves;
  double nines = 1;
  for (size_t i = 0; i < Pairs(a, b) && i < 4; ++i) {
    const std::string& color = kPalette[i % kPalette.size()];
    ChartSeries sa{absl::StrCat("A ", a.levels[i].label), color, PercentileCurve(a.levels[i].all.response)};
    ChartSeries sb{absl::StrCat("B ", b.levels[i].label), color, PercentileCurve(b.levels[i].all.response), true};
    for (const ChartSeries* s : {&sa, &sb}) {
      if (!s->points.empty()) nines = std::max(nines, s->points.back().first);
    }
    curves.push_back(std::move(sa));
    curves.push_back(std::move(sb));
  }
  ChartSpec pc{"compare_percentile_curve", "Percentile curves, A solid, B dashed", "percentile", "response time"};
  pc.log_y = true;
  pc.y_format = FormatNsTick;
  pc.x_ticks = NinesTicks(nines);
  ChartSeries sweep_a{"A p99", kPalette[1], {}, false, true}, sweep_b{"B p99", kPalette[0], {}, true, true};
  for (const auto& [run, series] : {std::pair{&a, &sweep_a}, std::pair{&b, &sweep_b}}) {
    for (const LevelResult& l : run->levels) {
      if (l.all.response.count == 0) continue;
      series->points.emplace_back(l.all.throughput, static_cast<double>(l.all.response.Build().Percentile(0.99)));
    }
  }
  ChartSpec sw{"compare_sweep_curve", "Throughput vs p99, A and B", "throughput (requests/s)", "p99"};
  sw.log_y = true;
  sw.y_format = FormatNsTick;
  sw.x_format = FormatCountTick;
  ChartSeries ta{"A p99", kPalette[1], {}}, tb{"B p99", kPalette[0], {}, true};
  for (const auto& [run, series] : {std::pair{&a, &ta}, std::pair{&b, &tb}}) {
    for (const WindowPoint& w : run->windows) {
      if (w.ok > 0) series->points.emplace_back(w.t_s, static_cast<double>(w.p99));
    }
  }
  ChartSpec ot{"compare_latency_over_time", "p99 over time (seconds since each run began)", "time (s)", "p99"};
  ot.log_y = true;
  ot.y_format = FormatNsTick;
  absl::StrAppend(&out, LineChart(pc, curves), LineChart(sw, {sweep_a, sweep_b}), LineChart(ot, {ta, tb}), PageEnd());
  return out;
}

int CompareMain(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string html;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--html" && i + 1 < args.size()) {
      html = args[++i];
    } else if (args[i].rfind("--html=", 0) == 0) {
      html = args[i].substr(7);
    } else if (args[i].rfind("--", 0) == 0) {
      std::fprintf(stderr, "onyx-load compare: unknown flag '%s' (expected A.json B.json [--html FILE])\n",
                   args[i].c_str());
      return kExitUsage;
    } else {
      files.push_back(args[i]);
    }
  }
  if (files.size() != 2) {
    std::fprintf(stderr, "onyx-load compare: expected two --json files (A.json B.json), got %zu\n", files.size());
    return kExitUsage;
  }
  absl::StatusOr<RunResult> a = ReadJsonReport(files[0]);
  absl::StatusOr<RunResult> b = a.ok() ? ReadJsonReport(files[1]) : a;
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "onyx-load compare: %s\n", std::string((a.ok() ? b : a).status().message()).c_str());
    return kExitUsage;
  }
  std::fputs(CompareText(*a, files[0], *b, files[1]).c_str(), stdout);
  if (!html.empty()) {
    if (absl::Status s = WriteTextFile("--html", html, CompareHtml(*a, files[0], *b, files[1])); !s.ok()) {
      std::fprintf(stderr, "onyx-load compare: %s\n", std::string(s.message()).c_str());
      return kExitUsage;
    }
  }
  return kExitOk;
}

}  // namespace onyx::load
