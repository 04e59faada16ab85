// How many CPUs this process may really use: the smaller of its affinity mask
// (sched_getaffinity) and its cgroup CPU quota (cpu.max, v2, or cfs_quota_us, v1),
// rounded up, at least 1. Containers with a CPU limit see the limit, not the host.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onyx {

// An unreadable or malformed cgroup file counts as no quota (logged once as a
// warning): the affinity mask alone then decides. Thread-safe.
int AvailableCpuCount();

// Parses the contents of a cgroup v2 "cpu.max" file ("max 100000" or
// "200000 100000", trailing newline allowed): the quota in CPUs, 0 when
// unlimited. InvalidArgument, quoting the text, when it is not two fields of a
// positive integer (or "max") and a positive integer period.
absl::StatusOr<double> ParseCgroupCpuMax(absl::string_view text);

// Parses cgroup v1 "cpu.cfs_quota_us" and "cpu.cfs_period_us" contents: the
// quota in CPUs, 0 when unlimited (quota -1). InvalidArgument, naming the file
// and quoting its text, when either is not an integer or the period is not positive.
absl::StatusOr<double> ParseCgroupV1Quota(absl::string_view quota_text, absl::string_view period_text);

}  // namespace onyx
