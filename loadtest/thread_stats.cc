#include "loadtest/thread_stats.h"

#include "absl/strings/str_cat.h"

namespace onyx::load {
namespace {

constexpr int64_t kLateNs = 1'000'000;
constexpr size_t kMaxDistinctErrors = 32;
constexpr size_t kMaxMessageBytes = 240;

void MergeHistogram(std::unique_ptr<Histogram>& into, std::unique_ptr<Histogram>& from) {
  if (!from || from->count() == 0) return;
  if (!into) into = std::make_unique<Histogram>();
  into->Merge(*from);
  from->Reset();
}

}  // namespace

std::string CodeName(int code) {
  static const char* kNames[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  if (code >= 0 && code <= 16) return kNames[code];
  if (code == kMismatch) return "OUTPUT_MISMATCH";
  return absl::StrCat("CODE_", code);
}

void ModelTotals::MergeFrom(ModelTotals& other) {
  MergeHistogram(response, other.response);
  MergeHistogram(service, other.service);
  intended += other.intended;
  dropped += other.dropped;
  sent_in_span += other.sent_in_span;
  ok += other.ok;
  failed += other.failed;
  for (auto& [key, n] : other.errors) errors[key] += n;
  other.intended = other.dropped = other.sent_in_span = other.ok = other.failed = 0;
  other.errors.clear();
}

void LevelTotals::MergeFrom(LevelTotals& other) {
  for (size_t m = 0; m < models.size() && m < other.models.size(); ++m) models[m].MergeFrom(other.models[m]);
  MergeHistogram(lag, other.lag);
  late += other.late;
  other.late = 0;
  for (auto& [peer, n] : other.peers) peers[peer] += n;
  other.peers.clear();
}

void WindowTotals::MergeFrom(WindowTotals& other) {
  response.Merge(other.response);
  service.Merge(other.service);
  other.response.Reset();
  other.service.Reset();
  dispatched += other.dispatched;
  ok += other.ok;
  failed += other.failed;
  dropped += other.dropped;
  other.dispatched = other.ok = other.failed = other.dropped = 0;
}

LevelTotals& ThreadStats::Level(int level) {
  for (auto& [index, totals] : levels_) {
    if (index == level) return *totals;
  }
  std::unique_ptr<LevelTotals> totals;
  if (!spare_.empty()) {
    totals = std::move(spare_.back());
    spare_.pop_back();
  } else {
    totals = std::make_unique<LevelTotals>(num_models_);
  }
  levels_.emplace_back(level, std::move(totals));
  return *levels_.back().second;
}

void ThreadStats::RecordDispatch(int level, int model, int64_t lag_ns, bool dropped) {
  absl::MutexLock lock(&mu_);
  ++window_.dispatched;
  if (dropped) ++window_.dropped;
  if (level < 0) return;
  LevelTotals& l = Level(level);
  ModelTotals& m = l.models[model];
  ++m.intended;
  if (dropped) ++m.dropped;
  if (lag_ns < 0) return;  // closed loop: no schedule to be late for
  if (!l.lag) l.lag = std::make_unique<Histogram>();
  l.lag->Record(lag_ns);
  if (lag_ns > kLateNs) ++l.late;
}

void ThreadStats::RecordSentInSpan(int level, int model) {
  if (level < 0) return;
  absl::MutexLock lock(&mu_);
  ++Level(level).models[model].sent_in_span;
}

void ThreadStats::RecordCompletion(const Completion& c) {
  absl::MutexLock lock(&mu_);
  const bool ok = c.code == 0;
  if (ok) {
    ++window_.ok;
    window_.response.Record(c.done_ns - c.intended_ns);
    window_.service.Record(c.done_ns - c.sent_ns);
  } else {
    ++window_.failed;
  }
  if (c.level < 0) return;
  LevelTotals& l = Level(c.level);
  ModelTotals& m = l.models[c.model];
  if (!c.peer.empty()) {
    // Peers are few (one per backend address); find before inserting to avoid a string per call.
    auto it = l.peers.find(c.peer);
    if (it == l.peers.end()) it = l.peers.emplace(std::string(c.peer), 0).first;
    ++it->second;
  }
  if (ok) {
    ++m.ok;
    if (!m.response) m.response = std::make_unique<Histogram>();
    if (!m.service) m.service = std::make_unique<Histogram>();
    m.response->Record(c.done_ns - c.intended_ns);
    m.service->Record(c.done_ns - c.sent_ns);
    return;
  }
  ++m.failed;
  std::string message(c.message.substr(0, kMaxMessageBytes));
  if (m.errors.size() >= kMaxDistinctErrors && !m.errors.count({c.code, message})) message = "(other messages)";
  ++m.errors[{c.code, std::move(message)}];
}

void ThreadStats::DrainInto(WindowTotals* window, std::vector<std::unique_ptr<LevelTotals>>* levels) {
  absl::MutexLock lock(&mu_);
  window->MergeFrom(window_);
  for (auto& [index, totals] : levels_) {
    if (static_cast<int>(levels->size()) <= index) levels->resize(index + 1);
    auto& into = (*levels)[index];
    if (!into) into = std::make_unique<LevelTotals>(num_models_);
    into->MergeFrom(*totals);
    spare_.push_back(std::move(totals));
  }
  levels_.clear();
}

}  // namespace onyx::load
