// The CPU quota of this process, the default thread count of a session.
// Thread-safe.
#pragma once

namespace onyx {

// How many CPUs this process may use (its affinity mask and cgroup CPU limit):
// the default of SessionOptions::intra_op_threads.
int ProcessCpuQuota();

}  // namespace onyx
