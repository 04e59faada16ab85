// Running test cases in child processes, so that a crash, a hang or an abort in
// the engine becomes a failed case instead of ending the run.
//
//   IsolationOptions options;
//   options.jobs = 2;
//   RunIsolated(cases.size(), [&](size_t i) { return RunCase(cases[i], {}); }, options,
//               [&](size_t i, const absl::Status& result) { Report(cases[i], result); });
//
// The calling process must not have started threads that a forked child would
// need (OpenMP pools, thread-pool singletons): only children run the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"

namespace onyx::conformance {

// False under a sanitizer: it reserves terabytes of address space for its shadow memory, so
// an address-space limit would fail every child at its first mmap.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kAddressSpaceLimitApplies = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kAddressSpaceLimitApplies = false;
#else
constexpr bool kAddressSpaceLimitApplies = true;
#endif
#else
constexpr bool kAddressSpaceLimitApplies = true;
#endif

struct IsolationOptions {
  // Children running at once.
  int jobs = 1;
  // A child still running after this is killed; its result is DEADLINE_EXCEEDED
  // "timed out after N s".
  double timeout_seconds = 20;
  // RLIMIT_AS of each child in MiB, so a runaway allocation fails inside the case;
  // 0 leaves it unlimited. Not applied under a sanitizer (kAddressSpaceLimitApplies).
  int64_t memory_limit_mb = 0;
  // When false, the children's stdout and stderr are captured (the tail of stderr
  // is added to a crash reason) instead of passed through.
  bool show_child_output = false;
};

// Calls task(i) for every i in [0, count), each in a fresh forked child, at most
// options.jobs at a time. The child's returned Status (code and message) is passed
// back through a pipe; an exception escaping `task` becomes INTERNAL "threw ...", a
// child killed by a signal INTERNAL "crashed (signal N)", a child that exits without
// a result INTERNAL "exited with status N". `on_done(i, result)` is called in this
// process in increasing order of i. Thread-hostile: uses fork, waitpid and poll.
void RunIsolated(size_t count, const std::function<absl::Status(size_t)>& task, const IsolationOptions& options,
                 const std::function<void(size_t, const absl::Status&)>& on_done);

}  // namespace onyx::conformance
