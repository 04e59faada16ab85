// The run's verdict and exit code, from its levels and the --assert
// criteria. Documented in README.md and `onyx-load --help`:
//
//   0 ok · 1 an --assert failed (or --find-max found no rate meeting --slo)
//   2 bad flags or inputs (decided before any load, in main)
//   3 unstable: response times kept rising through a level
//   4 generator saturated: sends fell behind onyx-load's own schedule
//   5 target unreachable: no connection, or every request failed UNAVAILABLE
//
// When several apply, the highest code wins: a saturated generator or an
// unreachable server makes every latency figure (and so every assertion)
// meaningless. Under --find-max only the probes that met the SLO count
// towards 3 and 4 (the probes above the maximum are overloaded by design).
// Pure; thread-safe.
#pragma once

#include <vector>

#include "loadtest/criteria.h"
#include "loadtest/result.h"

namespace onyx::load {

enum ExitCode {
  kExitOk = 0,
  kExitAssert = 1,
  kExitUsage = 2,
  kExitUnstable = 3,
  kExitSaturated = 4,
  kExitUnreachable = 5
};

const char* ExitCodeName(int code);

// Checks `asserts` on every level (all models together), fills r->asserts,
// r->exit_code and r->verdict.
void DecideVerdict(const std::vector<Criterion>& asserts, RunResult* r);

}  // namespace onyx::load
