#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "loadtest/options.h"
#include "loadtest/status_macros.h"
#include "loadtest/units.h"

namespace onyx::load {
namespace {

absl::StatusOr<ModelSpec> ParseModel(absl::string_view text) {
  ModelSpec spec;
  absl::string_view rest = text;
  if (const size_t at = rest.rfind('@'); at != absl::string_view::npos) {
    ASSIGN_OR_RETURN(spec.weight, ParseNumber("--model WEIGHT", rest.substr(at + 1), 1e-9, 1e9));
    rest = rest.substr(0, at);
  }
  if (const size_t colon = rest.find(':'); colon != absl::string_view::npos) {
    spec.version = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }
  spec.name = std::string(rest);
  if (spec.name.empty() || (text.find(':') != absl::string_view::npos && spec.version.empty())) {
    return absl::InvalidArgumentError(absl::StrCat("--model: expected NAME[:VERSION][@WEIGHT], got '", text, "'"));
  }
  return spec;
}

absl::StatusOr<ShapeOverride> ParseShape(absl::string_view text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("--shape: expected [MODEL:]INPUT=D1,D2,... with positive dims, got '", text, "'"));
  };
  const size_t eq = text.find('=');
  if (eq == absl::string_view::npos || eq == 0 || eq + 1 == text.size()) return bad();
  ShapeOverride shape;
  absl::string_view name = text.substr(0, eq);
  if (const size_t colon = name.find(':'); colon != absl::string_view::npos) {
    shape.model = std::string(name.substr(0, colon));
    name = name.substr(colon + 1);
  }
  shape.input = std::string(name);
  for (absl::string_view d : absl::StrSplit(text.substr(eq + 1), ',')) {
    int64_t dim = 0;
    if (!absl::SimpleAtoi(d, &dim) || dim < 0) return bad();
    shape.dims.push_back(dim);
  }
  if (shape.input.empty()) return bad();
  return shape;
}

absl::StatusOr<std::vector<double>> ParsePercentiles(absl::string_view text) {
  std::vector<double> out;
  for (absl::string_view p : absl::StrSplit(text, ',')) {
    double v = 0;
    if (!absl::SimpleAtod(p, &v) || !(v > 0) || !(v < 100)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--percentiles: expected numbers in (0, 100) such as 50,99,99.9, got '", text, "'"));
    }
    out.push_back(v / 100);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::Status Choice(absl::string_view flag, absl::string_view value, absl::string_view a, absl::string_view b,
                    bool* is_b) {
  if (value != a && value != b) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": expected ", a, " or ", b, ", got '", value, "'"));
  }
  *is_b = value == b;
  return absl::OkStatus();
}

absl::Status Conflict(absl::string_view a, absl::string_view b, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(a, " and ", b, " cannot be combined: ", why));
}

absl::Status Check(Options& o, const std::map<std::string, int>& seen) {
  const auto has = [&](const char* flag) { return seen.count(flag) > 0; };
  if (o.targets.empty()) o.targets.push_back("127.0.0.1:8001");
  if (o.empty_call && !o.models.empty()) return Conflict("--empty", "--model", "the empty call names no model");
  if (!o.empty_call && o.models.empty()) {
    return absl::InvalidArgumentError(
        "--model: expected at least one --model NAME (or --empty for ServerLive calls), got none");
  }
  if (has("--rate") && has("--concurrency")) {
    return Conflict("--rate", "--concurrency",
                    "one is an open loop, the other closed; --max-inflight caps an open loop");
  }
  if (has("--ramp") && has("--rate")) return Conflict("--ramp", "--rate", "the ramp sets the rate");
  if (has("--ramp") && has("--concurrency")) return Conflict("--ramp", "--concurrency", "a ramp is an open loop");
  if (o.find_max) {
    if (o.slo.empty())
      return absl::InvalidArgumentError("--find-max: expected --slo CRITERIA (e.g. 'p99<20ms,err<0.1%'), got none");
    if (has("--concurrency") || has("--ramp"))
      return Conflict("--find-max", has("--ramp") ? "--ramp" : "--concurrency", "the search sets an open-loop rate");
  } else if (!o.slo.empty()) {
    return absl::InvalidArgumentError("--slo: only --find-max searches against an SLO; use --assert to gate a run");
  }
  if (!has("--rate") && !has("--concurrency") && !has("--ramp") && !o.find_max) o.concurrency = {1};
  if (!o.open_loop() && o.max_inflight > 0)
    return Conflict("--max-inflight", "--concurrency", "a closed loop has no schedule to cap");
  if (!o.open_loop() && (has("--arrival") || has("--overflow"))) {
    return Conflict(has("--arrival") ? "--arrival" : "--overflow", "--concurrency", "they shape an open loop");
  }
  if (has("--overflow") && o.max_inflight == 0)
    return absl::InvalidArgumentError("--overflow: only applies with --max-inflight N");
  if (o.requests > 0 && (has("--duration") || o.ramp.kind != Ramp::Kind::kNone || o.find_max)) {
    return Conflict("--requests",
                    has("--duration") ? "--duration"
                    : o.find_max      ? "--find-max"
                                      : "--ramp",
                    "a level is measured either by time or by count");
  }
  if (o.shm_system && o.typed_encoding)
    return Conflict("--shm system", "--encoding typed", "shared memory holds raw bytes");
  if (o.empty_call && (o.shm_system || o.validate || o.streaming || !o.data.empty() || !o.shapes.empty())) {
    return absl::InvalidArgumentError(
        "--empty: sends ServerLive, which takes no inputs, shared memory, validation or stream");
  }
  if (o.duration_s <= 0) return absl::InvalidArgumentError("--duration: expected a positive duration, got 0");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& args) {
  Options o;
  std::map<std::string, int> seen;
  using Handler = std::function<absl::Status(absl::string_view)>;
  const auto set_seconds = [](double* out, const char* flag) {
    return Handler([out, flag](absl::string_view v) -> absl::Status {
      ASSIGN_OR_RETURN(*out, ParseSeconds(flag, v));
      return absl::OkStatus();
    });
  };
  const std::map<std::string, Handler> with_value =
      {
          {"--target",
           [&](absl::string_view v) {
    o.targets.emplace_back(v);
    return absl::OkStatus();
           }},
          {"--model",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(ModelSpec m, ParseModel(v));
             o.models.push_back(std::move(m));
             return absl::OkStatus();
           }},
          {"--concurrency",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(o.concurrency, ParseLevels("--concurrency", v, 1, 100000));
             for (double& c : o.concurrency) c = static_cast<double>(static_cast<int64_t>(c));
             return absl::OkStatus();
           }},
          {"--rate",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(o.rate, ParseLevels("--rate", v, 1e-3, 1e8));
             return absl::OkStatus();
           }},
          {"--arrival", [&](absl::string_view v) { return Choice("--arrival", v, "constant", "poisson", &o.poisson); }},
          {"--seed",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(int64_t s, ParseInt("--seed", v, 0, INT64_MAX));
             o.seed = static_cast<uint64_t>(s);
             return absl::OkStatus();
           }},
          {"--max-inflight",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(o.max_inflight, ParseInt("--max-inflight", v, 1, 1000000));
             return absl::OkStatus();
           }},
          {"--overflow",
           [&](absl::string_view v) { return Choice("--overflow", v, "queue", "drop", &o.drop_overflow); }},
          {"--duration", set_seconds(&o.duration_s, "--duration")},
          {"--requests",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(o.requests, ParseInt("--requests", v, 1, int64_t{1} << 40));
             return absl::OkStatus();
           }},
          {"--warmup", set_seconds(&o.warmup_s, "--warmup")},
          {"--ramp",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(o.ramp, ParseRamp(v));
             return absl::OkStatus();
           }},
          {"--slo",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(std::vector<Criterion> c, ParseCriteria("--slo", v));
             o.slo.insert(o.slo.end(), c.begin(), c.end());
             return absl::OkStatus();
           }},
          {"--find-max-precision",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(o.find_max_precision, ParseNumber("--find-max-precision", v, 0.001, 1));
             return absl::OkStatus();
           }},
          {"--threads",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(int64_t t, ParseInt("--threads", v, 1, 64));
             o.threads = static_cast<int>(t);
             return absl::OkStatus();
           }},
          {"--connections",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(int64_t c, ParseInt("--connections", v, 1, 1024));
             o.connections = static_cast<int>(c);
             return absl::OkStatus();
           }},
          {"--timeout", set_seconds(&o.timeout_s, "--timeout")},
          {"--drain-timeout", set_seconds(&o.drain_timeout_s, "--drain-timeout")},
          {"--connect-timeout", set_seconds(&o.connect_timeout_s, "--connect-timeout")},
          {"--batch",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(o.batch, ParseInt("--batch", v, 1, 1 << 20));
             return absl::OkStatus();
           }},
          {"--shape",
           [&](absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(ShapeOverride s, ParseShape(v));
             o.shapes.push_back(std::move(s));
             return absl::OkStatus();
           }},
          {"--input-data",
           [&](absl::string_view v) -> absl::Status {
             DataSource d;
             d.source = std::string(v);
             // MODEL=SOURCE when the text before '=' names a --model (checked once all flags are read).
             if (const size_t eq = v.find('='); eq != absl::string_view::npos && eq > 0) {
               d.model = std::string(v.substr(0, eq));
               d.source = std::string(v.substr(eq + 1));
             }
             o.data.push_back(std::move(d));
             return absl::OkStatus();
           }},
          {"--encoding",
           [&](absl::string_view v) { return Choice("--encoding", v, "raw", "typed", &o.typed_encoding); }},
          {"--shm", [&](absl::string_view v) { return Choice("--shm", v, "none", "system", &o.shm_system); }},
          {"--metrics-url",
           [&](absl::string_view v) {
    o.metrics_urls.emplace_back(v);
    return absl::OkStatus();
           }},
                                       {"--scrape-interval", set_seconds(&o.scrape_interval_s, "--scrape-interval")},
                                       {"--percentiles",
                                        [&](absl::string_view v) -> absl::Status {
                                          ASSIGN_OR_RETURN(o.percentiles, ParsePercentiles(v));
                                          return absl::OkStatus();
                                        }},
                                       {"--json",
                                        [&](absl::string_view v) {
    o.json_path = std::string(v);
    return absl::OkStatus();
                                        }},
      {"--csv",
       [&](absl::string_view v) {
    o.csv_path = std::string(v);
    return absl::OkStatus();
       }},
      {"--html",
       [&](absl::string_view v) {
    o.html_path = std::string(v);
    return absl::OkStatus();
       }},
      {"--trace",
       [&](absl::string_view v) {
    o.trace_path = std::string(v);
    return absl::OkStatus();
       }},
      {"--assert",
       [&](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(std::vector<Criterion> c, ParseCriteria("--assert", v));
         o.asserts.insert(o.asserts.end(), c.begin(), c.end());
         return absl::OkStatus();
       }},
      {"--max-late-share",
       [&](absl::string_view v) -> absl::Status {
         const bool percent = absl::EndsWith(v, "%");
         ASSIGN_OR_RETURN(double s, ParseNumber("--max-late-share", percent ? v.substr(0, v.size() - 1) : v, 0,
                                                percent ? 100 : 1));
         o.max_late_share = percent ? s / 100 : s;
         return absl::OkStatus();
       }},
      };
  const std::map<std::string, bool*> switches = {
      {"--empty", &o.empty_call},  {"--streaming", &o.streaming}, {"--validate", &o.validate},
      {"--find-max", &o.find_max}, {"--quiet", &o.quiet},         {"--help", &o.help},
      {"--version", &o.version},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool inline_value = false;
    if (const size_t eq = flag.find('='); absl::StartsWith(flag, "--") && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inline_value = true;
    }
    if (flag == "-h") flag = "--help";
    if (flag == "--no-server-stats") {
      o.server_stats = false;
    } else if (auto s = switches.find(flag); s != switches.end()) {
      if (inline_value) return absl::InvalidArgumentError(absl::StrCat(flag, ": takes no value, got '", value, "'"));
      *s->second = true;
    } else if (auto h = with_value.find(flag); h != with_value.end()) {
      if (!inline_value) {
        if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat(flag, ": expected a value, got none"));
        value = args[++i];
      }
      RETURN_IF_ERROR(h->second(value));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", args[i], "' (onyx-load --help lists them)"));
    }
    ++seen[flag];
    o.given.emplace_back(flag, value);
  }
  if (o.help || o.version) return o;
  // A data source named MODEL=... must name a --model; otherwise '=' was part of a path.
  for (DataSource& d : o.data) {
    if (d.model.empty()) continue;
    const bool known =
        std::any_of(o.models.begin(), o.models.end(), [&](const ModelSpec& m) { return m.name == d.model; });
    if (!known) {
      d.source = d.model + "=" + d.source;
      d.model.clear();
    }
  }
  RETURN_IF_ERROR(Check(o, seen));
  return o;
}

}  // namespace onyx::load
