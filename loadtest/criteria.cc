#include "loadtest/criteria.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "loadtest/status_macros.h"
#include "loadtest/units.h"

namespace onyx::load {
namespace {

// A share: "0.1%" or "0.001".
absl::StatusOr<double> ParseShare(absl::string_view what, absl::string_view text) {
  if (absl::EndsWith(text, "%")) {
    ASSIGN_OR_RETURN(double percent, ParseNumber(what, text.substr(0, text.size() - 1), 0, 100));
    return percent / 100;
  }
  return ParseNumber(what, text, 0, 1);
}

}  // namespace

absl::StatusOr<Criterion> Criterion::Parse(absl::string_view what, absl::string_view raw) {
  const std::string text(absl::StripAsciiWhitespace(raw));
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": expected METRIC<VALUE such as p99<25ms, err<0.1%, throughput>=900 (", why, "), got '", text, "'"));
  };
  const size_t at = text.find_first_of("<>");
  if (at == std::string::npos || at == 0) return bad("no < or >");
  Criterion c;
  c.text_ = text;
  const bool equal = at + 1 < text.size() && text[at + 1] == '=';
  c.op_ = text[at] == '<' ? (equal ? Op::kLessEqual : Op::kLess) : (equal ? Op::kGreaterEqual : Op::kGreater);
  absl::string_view metric = absl::string_view(text).substr(0, at);
  const absl::string_view value = absl::string_view(text).substr(at + (equal ? 2 : 1));
  metric = absl::StripAsciiWhitespace(metric);
  if (value.empty()) return bad("no value");

  if (metric == "err" || metric == "late") {
    c.metric_ = metric == "err" ? Metric::kError : Metric::kLate;
    absl::StatusOr<double> share = ParseShare(what, value);
    if (!share.ok()) return bad("a share such as 0.1% or 0.001");
    c.threshold_ = *share;
    return c;
  }
  if (metric == "throughput" || metric == "rps") {
    c.metric_ = Metric::kThroughput;
    absl::StatusOr<double> rate = ParseNumber(what, value, 0, 1e12);
    if (!rate.ok()) return bad("requests per second");
    c.threshold_ = *rate;
    return c;
  }
  c.metric_ = Metric::kResponse;
  if (absl::ConsumePrefix(&metric, "service.")) c.metric_ = Metric::kService;
  if (metric == "max") {
    c.quantile_ = 1;
  } else if (metric == "mean") {
    c.quantile_ = -1;
  } else if (absl::ConsumePrefix(&metric, "p")) {
    double percent = 0;
    if (!absl::SimpleAtod(metric, &percent) || !(percent > 0) || !(percent < 100)) {
      return bad("a percentile between p0 and p100");
    }
    c.quantile_ = percent / 100;
  } else {
    return bad("unknown metric");
  }
  // A latency must carry its unit: "25" could be seconds or milliseconds.
  if (!value.empty() && (absl::ascii_isdigit(value.back()) || value.back() == '.')) {
    return bad("a latency needs a unit: us, ms or s");
  }
  absl::StatusOr<double> seconds = ParseSeconds(what, value);
  if (!seconds.ok()) return bad("a latency such as 250us, 25ms or 1s");
  c.threshold_ = *seconds * 1e9;
  return c;
}

CriterionOutcome Criterion::Check(const ModelLevelResult& model, const LevelResult& level) const {
  CriterionOutcome out;
  out.text = text_;
  out.level = level.label;
  switch (metric_) {
    case Metric::kError: out.measured = model.error_share(); break;
    case Metric::kLate: out.measured = level.late_share(); break;
    case Metric::kThroughput: out.measured = model.throughput; break;
    case Metric::kResponse:
    case Metric::kService: {
      const HistogramData& data = metric_ == Metric::kResponse ? model.response : model.service;
      if (quantile_ < 0) {
        out.measured = data.mean();
      } else if (quantile_ >= 1) {
        out.measured = static_cast<double>(data.max);
      } else {
        out.measured = static_cast<double>(data.Build().Percentile(quantile_));
      }
      break;
    }
  }
  // No successful reply: a latency bound says nothing, so it does not hold.
  const bool latency = metric_ == Metric::kResponse || metric_ == Metric::kService;
  if (latency && model.ok == 0) {
    out.met = false;
    return out;
  }
  switch (op_) {
    case Op::kLess: out.met = out.measured < threshold_; break;
    case Op::kLessEqual: out.met = out.measured <= threshold_; break;
    case Op::kGreater: out.met = out.measured > threshold_; break;
    case Op::kGreaterEqual: out.met = out.measured >= threshold_; break;
  }
  return out;
}

absl::StatusOr<std::vector<Criterion>> ParseCriteria(absl::string_view what, absl::string_view text) {
  std::vector<Criterion> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(Criterion c, Criterion::Parse(what, part));
    out.push_back(std::move(c));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no criterion in '", text, "'"));
  return out;
}

}  // namespace onyx::load
