#include "loadtest/verdict.h"

#include "absl/strings/str_cat.h"

namespace onyx::load {

const char* ExitCodeName(int code) {
  switch (code) {
    case kExitOk: return "ok";
    case kExitAssert: return "assertion failed";
    case kExitUsage: return "bad flags or inputs";
    case kExitUnstable: return "unstable";
    case kExitSaturated: return "generator saturated";
    case kExitUnreachable: return "target unreachable";
    default: return "unknown";
  }
}

void DecideVerdict(const std::vector<Criterion>& asserts, RunResult* r) {
  bool failed = false, unstable = false, saturated = false;
  int64_t ok = 0, failures = 0, unavailable = 0;
  r->asserts.clear();
  for (const LevelResult& level : r->levels) {
    for (const Criterion& c : asserts) {
      r->asserts.push_back(c.Check(level.all, level));
      failed = failed || !r->asserts.back().met;
    }
    const bool counts = !r->find_max.ran || level.slo_met;
    unstable = unstable || (counts && level.unstable);
    saturated = saturated || (counts && level.saturated);
    ok += level.all.ok;
    failures += level.all.failed;
    for (const ErrorGroup& g : level.all.errors) {
      if (g.code == "UNAVAILABLE") unavailable += g.count;
    }
  }
  if (r->find_max.ran && !r->find_max.found) failed = true;
  const bool unreachable = !r->levels.empty() && ok == 0 && failures > 0 && unavailable == failures;
  if (unreachable) r->notes.push_back("every request failed with UNAVAILABLE");
  r->exit_code = unreachable ? kExitUnreachable
                 : saturated ? kExitSaturated
                 : unstable  ? kExitUnstable
                 : failed    ? kExitAssert
                             : kExitOk;
  r->verdict = ExitCodeName(r->exit_code);
}

}  // namespace onyx::load
