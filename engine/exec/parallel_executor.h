// The multi-lane executor. Each lane walks its nodes in order on its own
// thread (lane 0: the caller's; CPU lanes: session-owned worker streams;
// device lanes: the provider's stream). A node with producers on other lanes
// waits on a countdown barrier that those producers count down when they
// finish; same-lane order needs no waiting. A value is released when its last
// reader on any lane is done. The first error or the terminate flag stops
// every lane; the run returns that status.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "exec/execution_frame.h"
#include "framework/stream.h"

namespace onyx {

// `streams[l]` runs lane l for l >= 1 (streams[0] is unused: the caller runs
// lane 0). The plan must have lanes (plan.lane_nodes non-empty).
absl::Status ExecutePlanParallel(ExecutionFrame& frame, const std::vector<Stream*>& streams);

}  // namespace onyx
