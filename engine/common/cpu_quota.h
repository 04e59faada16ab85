// How many CPUs this process may really use: the smaller of its affinity mask
// (sched_getaffinity) and its cgroup CPU quota (cpu.max, v2, or cfs_quota_us, v1),
// rounded up, at least 1. Containers with a CPU limit see the limit, not the host.
#pragma once

namespace onyx {

int AvailableCpuCount();

// Parses the contents of a cgroup v2 "cpu.max" file ("max 100000" or
// "200000 100000"); returns 0 when unlimited or unparsable.
double ParseCgroupCpuMax(const char* text);

}  // namespace onyx
