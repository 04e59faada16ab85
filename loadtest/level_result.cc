#include "loadtest/level_result.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loadtest/units.h"

namespace onyx::load {
namespace {

std::vector<ErrorGroup> GroupErrors(const std::map<std::pair<int, std::string>, int64_t>& errors) {
  std::map<int, ErrorGroup> by_code;
  for (const auto& [key, n] : errors) {
    ErrorGroup& g = by_code[key.first];
    g.code = CodeName(key.first);
    g.count += n;
    g.messages.emplace_back(key.second, n);
  }
  std::vector<ErrorGroup> out;
  for (auto& [code, g] : by_code) {
    std::sort(g.messages.begin(), g.messages.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (g.messages.size() > 5) g.messages.resize(5);
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const ErrorGroup& a, const ErrorGroup& b) { return a.count > b.count; });
  return out;
}

void AddErrors(std::vector<ErrorGroup>* into, const std::vector<ErrorGroup>& from) {
  for (const ErrorGroup& g : from) {
    auto it = std::find_if(into->begin(), into->end(), [&](const ErrorGroup& e) { return e.code == g.code; });
    if (it == into->end()) {
      into->push_back(g);
      continue;
    }
    it->count += g.count;
    it->messages.insert(it->messages.end(), g.messages.begin(), g.messages.end());
    std::sort(it->messages.begin(), it->messages.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    if (it->messages.size() > 5) it->messages.resize(5);
  }
}

}  // namespace

bool RisingLatency(const std::vector<WindowPoint>& windows, std::string* reason) {
  std::vector<int64_t> p50;
  for (const WindowPoint& w : windows) {
    if (w.ok > 0) p50.push_back(w.p50);
  }
  if (p50.size() < 6) return false;
  const size_t third = p50.size() / 3;
  double first = 0, last = 0;
  for (size_t i = 0; i < third; ++i) {
    first += static_cast<double>(p50[i]);
    last += static_cast<double>(p50[p50.size() - 1 - i]);
  }
  first /= third;
  last /= third;
  if (last > 2 * first && last - first > 1e6) {
    *reason = absl::StrCat("response-time p50 rose from ", FormatNs(first), " in the first third of the level to ",
                           FormatNs(last),
                           " in the last: the server fell behind the offered load, so the "
                           "percentiles depend on how long the level ran");
    return true;
  }
  return false;
}

LevelResult SummarizeLevel(const LevelInputs& in, std::unique_ptr<LevelTotals> totals) {
  LevelResult r;
  r.index = in.index;
  r.label = in.label;
  r.open_loop = in.open_loop;
  r.target_rate = in.target_rate;
  r.target_rate_end = in.target_rate_end;
  r.concurrency = in.concurrency;
  r.start_s = in.start_s;
  r.measured_s = in.measured_s;
  r.cpu_s = in.cpu_s;
  Histogram all_response, all_service;
  int64_t sent_in_span = 0;
  r.all.model = "all";
  for (size_t m = 0; m < totals->models.size(); ++m) {
    ModelTotals& t = totals->models[m];
    ModelLevelResult mr;
    mr.model = in.model_names[m];
    mr.intended = t.intended;
    mr.dropped = t.dropped;
    mr.sent = t.intended - t.dropped;
    mr.ok = t.ok;
    mr.failed = t.failed;
    if (t.response) {
      mr.response = HistogramData::From(*t.response);
      all_response.Merge(*t.response);
    }
    if (t.service) {
      mr.service = HistogramData::From(*t.service);
      all_service.Merge(*t.service);
    }
    mr.errors = GroupErrors(t.errors);
    mr.throughput = in.measured_s > 0 ? static_cast<double>(t.ok) / in.measured_s : 0;
    sent_in_span += t.sent_in_span;
    r.all.intended += mr.intended;
    r.all.dropped += mr.dropped;
    r.all.sent += mr.sent;
    r.all.ok += mr.ok;
    r.all.failed += mr.failed;
    AddErrors(&r.all.errors, mr.errors);
    r.models.push_back(std::move(mr));
  }
  r.all.response = HistogramData::From(all_response);
  r.all.service = HistogramData::From(all_service);
  r.all.throughput = in.measured_s > 0 ? static_cast<double>(r.all.ok) / in.measured_s : 0;
  r.send_rate = in.measured_s > 0 ? static_cast<double>(sent_in_span) / in.measured_s : 0;
  if (totals->lag) r.send_lag = HistogramData::From(*totals->lag);
  r.late_sends = totals->late;
  r.calls_per_peer.insert(totals->peers.begin(), totals->peers.end());
  if (in.open_loop && r.late_share() > in.max_late_share) {
    r.saturated = true;
    r.saturated_reason =
        absl::StrCat(FormatPercent(r.late_share()),
                     " of sends were more than 1 ms behind "
                     "schedule (limit ",
                     FormatPercent(in.max_late_share), "); onyx-load used ", absl::StrFormat("%.2f", r.cpu_share()),
                     " cores: add --threads, or run it on another machine");
  }
  if (in.windows != nullptr) {
    std::vector<WindowPoint> mine;
    for (const WindowPoint& w : *in.windows) {
      if (w.level == in.index) mine.push_back(w);
    }
    r.unstable = RisingLatency(mine, &r.unstable_reason);
  }
  return r;
}

}  // namespace onyx::load
