#include "loadtest/prom_text.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace onyx::load {
namespace {

bool ParseValue(absl::string_view text, double* v) {
  if (text == "+Inf" || text == "Inf") {
    *v = INFINITY;
    return true;
  }
  if (text == "-Inf") {
    *v = -INFINITY;
    return true;
  }
  if (text == "NaN") {
    *v = NAN;
    return true;
  }
  return absl::SimpleAtod(text, v);
}

// Adds one histogram series' line into `h` (bucket, _sum or _count).
void AddHistogramLine(const PromSample& s, absl::string_view base, ServerHistogram* h) {
  const absl::string_view suffix = absl::string_view(s.name).substr(base.size());
  if (suffix == "_sum") {
    h->sum += s.value;
  } else if (suffix == "_count") {
    h->count += s.value;
  } else if (suffix == "_bucket") {
    auto le = s.labels.find("le");
    double bound = 0;
    if (le == s.labels.end() || !ParseValue(le->second, &bound)) return;
    auto at = std::lower_bound(h->le.begin(), h->le.end(), bound);
    const size_t i = at - h->le.begin();
    if (at == h->le.end() || *at != bound) {
      h->le.insert(at, bound);
      h->cumulative.insert(h->cumulative.begin() + i, 0);
    }
    h->cumulative[i] += s.value;
  }
}

void AddHistogram(ServerHistogram* a, const ServerHistogram& b) {
  for (size_t i = 0; i < b.le.size(); ++i) {
    auto at = std::lower_bound(a->le.begin(), a->le.end(), b.le[i]);
    const size_t j = at - a->le.begin();
    if (at == a->le.end() || *at != b.le[i]) {
      a->le.insert(at, b.le[i]);
      a->cumulative.insert(a->cumulative.begin() + j, 0);
    }
    a->cumulative[j] += b.cumulative[i];
  }
  a->sum += b.sum;
  a->count += b.count;
}

}  // namespace

std::vector<PromSample> ParsePromText(absl::string_view text) {
  std::vector<PromSample> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    PromSample s;
    size_t at = line.find_first_of("{ ");
    if (at == absl::string_view::npos) continue;
    s.name = std::string(line.substr(0, at));
    if (line[at] == '{') {
      const size_t close = line.find('}', at);
      if (close == absl::string_view::npos) continue;
      absl::string_view labels = line.substr(at + 1, close - at - 1);
      while (!labels.empty()) {
        const size_t eq = labels.find('=');
        if (eq == absl::string_view::npos || eq + 1 >= labels.size() || labels[eq + 1] != '"') break;
        std::string key(absl::StripAsciiWhitespace(labels.substr(0, eq)));
        std::string value;
        size_t i = eq + 2;
        for (; i < labels.size() && labels[i] != '"'; ++i) {
          if (labels[i] == '\\' && i + 1 < labels.size()) {
            ++i;
            value.push_back(labels[i] == 'n' ? '\n' : labels[i]);
          } else {
            value.push_back(labels[i]);
          }
        }
        s.labels[key] = value;
        labels = i + 1 < labels.size() ? labels.substr(i + 1) : absl::string_view();
        absl::ConsumePrefix(&labels, ",");
      }
      at = close + 1;
    }
    absl::string_view rest = absl::StripLeadingAsciiWhitespace(line.substr(at));
    const size_t space = rest.find(' ');
    if (!ParseValue(rest.substr(0, space), &s.value)) continue;
    out.push_back(std::move(s));
  }
  return out;
}

MetricsSnapshot ParseMetrics(absl::string_view text) {
  MetricsSnapshot snap;
  struct HistogramName {
    const char* base;
    ServerHistogram ModelMetrics::*field;
  };
  static const HistogramName kHistograms[] = {
      {"onyx_request_duration_seconds", &ModelMetrics::request},
      {"onyx_queue_duration_seconds", &ModelMetrics::queue},
      {"onyx_compute_duration_seconds", &ModelMetrics::compute},
      {"onyx_batch_requests", &ModelMetrics::batch_requests},
      {"onyx_batch_rows", &ModelMetrics::batch_rows},
  };
  for (const PromSample& s : ParsePromText(text)) {
    if (s.name == "onyx_process_resident_memory_bytes") {
      snap.process_rss += s.value;
      continue;
    }
    if (!absl::StartsWith(s.name, "onyx_")) continue;
    auto model_label = s.labels.find("model");
    if (model_label == s.labels.end() || model_label->second.empty()) continue;
    ModelMetrics& m = snap.models[model_label->second];
    bool done = false;
    for (const HistogramName& h : kHistograms) {
      if (absl::StartsWith(s.name, h.base) && s.name.size() > strlen(h.base) && s.name[strlen(h.base)] == '_') {
        AddHistogramLine(s, h.base, &(m.*h.field));
        done = true;
        break;
      }
    }
    if (done) continue;
    if (s.name == "onyx_queue_depth") m.queue_depth += s.value;
    if (s.name == "onyx_inflight_requests") m.inflight += s.value;
    if (s.name == "onyx_arena_in_use_bytes") m.arena_in_use += s.value;
    if (s.name == "onyx_arena_reserved_bytes") m.arena_reserved += s.value;
    if (s.name == "onyx_requests_total") m.requests_total += s.value;
    // Every bucket session of a model has the same graph: the largest count is the model's.
    if (s.name == "onyx_model_cpu_fallback_nodes") m.fallback_nodes = std::max(m.fallback_nodes, s.value);
  }
  return snap;
}

void AddSnapshot(MetricsSnapshot* a, const MetricsSnapshot& b) {
  a->process_rss += b.process_rss;
  for (const auto& [name, m] : b.models) {
    ModelMetrics& into = a->models[name];
    AddHistogram(&into.request, m.request);
    AddHistogram(&into.queue, m.queue);
    AddHistogram(&into.compute, m.compute);
    AddHistogram(&into.batch_requests, m.batch_requests);
    AddHistogram(&into.batch_rows, m.batch_rows);
    into.queue_depth += m.queue_depth;
    into.inflight += m.inflight;
    into.arena_in_use += m.arena_in_use;
    into.arena_reserved += m.arena_reserved;
    into.requests_total += m.requests_total;
    into.fallback_nodes = std::max(into.fallback_nodes, m.fallback_nodes);
  }
}

ServerHistogram HistogramDelta(const ServerHistogram& after, const ServerHistogram& before) {
  ServerHistogram d = after;
  for (size_t i = 0; i < d.le.size(); ++i) {
    auto at = std::lower_bound(before.le.begin(), before.le.end(), d.le[i]);
    if (at != before.le.end() && *at == d.le[i]) d.cumulative[i] -= before.cumulative[at - before.le.begin()];
  }
  d.sum -= before.sum;
  d.count -= before.count;
  return d;
}

double HistogramQuantile(const ServerHistogram& h, double q, double* low, double* high) {
  *low = *high = 0;
  if (h.le.empty() || h.cumulative.back() <= 0) return 0;
  const double total = h.cumulative.back();
  const double rank = q * total;
  for (size_t i = 0; i < h.le.size(); ++i) {
    if (h.cumulative[i] < rank) continue;
    const double lower = i == 0 ? 0 : h.le[i - 1];
    const double below = i == 0 ? 0 : h.cumulative[i - 1];
    *low = lower;
    *high = h.le[i];
    if (std::isinf(h.le[i])) return lower;  // Prometheus: the highest finite bound
    const double in_bucket = h.cumulative[i] - below;
    if (in_bucket <= 0) return h.le[i];
    return lower + (h.le[i] - lower) * (rank - below) / in_bucket;
  }
  return h.le.back();
}

absl::StatusOr<std::string> HttpGet(const std::string& url, double timeout_s) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat("--metrics-url: expected http://HOST:PORT/PATH, got '", url, "'"));
  }
  const size_t slash = rest.find('/');
  const std::string hostport(rest.substr(0, slash));
  const std::string path = slash == absl::string_view::npos ? "/metrics" : std::string(rest.substr(slash));
  const size_t colon = hostport.rfind(':');
  const std::string host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  const std::string port = colon == std::string::npos ? "80" : hostport.substr(colon + 1);
  const auto fail = [&](absl::string_view why) { return absl::UnavailableError(absl::StrCat("GET ", url, ": ", why)); };
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) return fail("cannot resolve");
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  timeval tv{static_cast<time_t>(timeout_s), static_cast<suseconds_t>(std::fmod(timeout_s, 1.0) * 1e6)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const bool connected = fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  freeaddrinfo(found);
  if (!connected) {
    if (fd >= 0) close(fd);
    return fail(std::strerror(errno));
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", hostport, "\r\n\r\n");
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return fail("send failed");
  }
  std::string reply;
  char buf[65536];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) reply.append(buf, n);
  close(fd);
  const size_t body = reply.find("\r\n\r\n");
  if (body == std::string::npos) return fail("no HTTP reply");
  if (!absl::StartsWith(reply, "HTTP/1.1 200") && !absl::StartsWith(reply, "HTTP/1.0 200")) {
    return fail(absl::StrCat("answered '", reply.substr(0, reply.find('\r')), "'"));
  }
  return reply.substr(body + 4);
}

}  // namespace onyx::load
