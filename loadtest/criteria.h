// Pass/fail criteria for --assert and --slo: "p99<25ms", "err<0.1%",
// "service.p50<=2ms", "throughput>=900", "late<1%", "max<1s".
//
//   ASSIGN_OR_RETURN(std::vector<Criterion> c, ParseCriteria("--slo", "p99<20ms,err<0.1%"));
//   CriterionOutcome o = c[0].Check(level.all, level);
//
// Metrics: pNN[.N] / max / mean (response time, from the intended send),
// service.pNN / service.max / service.mean (from the actual send), err (failed
// plus dropped over intended), throughput (successful replies per second),
// late (share of sends more than 1 ms behind schedule). Operators <, <=, >,
// >=. Latencies take a unit (us, ms, s); err and late a % or a fraction.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "loadtest/result.h"

namespace onyx::load {

class Criterion {
 public:
  enum class Metric { kResponse, kService, kError, kThroughput, kLate };
  enum class Op { kLess, kLessEqual, kGreater, kGreaterEqual };

  // One criterion; INVALID_ARGUMENT naming `what` and `text` when malformed.
  static absl::StatusOr<Criterion> Parse(absl::string_view what, absl::string_view text);

  // The measured value on `model` (err, latencies, throughput) of `level`
  // (late), in the criterion's own unit (ns for latencies, a share for err
  // and late, per second for throughput), and whether it holds.
  CriterionOutcome Check(const ModelLevelResult& model, const LevelResult& level) const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  Metric metric_ = Metric::kResponse;
  double quantile_ = 0.99;  // latencies: 1 = max, -1 = mean
  Op op_ = Op::kLess;
  double threshold_ = 0;
};

// Comma-separated criteria ("p99<20ms,err<0.1%").
absl::StatusOr<std::vector<Criterion>> ParseCriteria(absl::string_view what, absl::string_view text);

}  // namespace onyx::load
