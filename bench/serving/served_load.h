// Served load: keeps `concurrency` gRPC calls outstanding against onyxd for a
// fixed time and logs the latency of each one.
//
//   ServedLoadOptions o;
//   o.address = "127.0.0.1:8001"; o.model = "mlp"; o.concurrency = 8;
//   ASSIGN_OR_RETURN(LoadSummary s, RunServedLoad(o));
//
// With a model it sends ModelInfer (raw_input_contents of `batch` rows, shapes
// from ModelMetadata) and checks every reply is well-formed: the model's
// outputs, each with the expected datatype, shape and raw byte count. Without
// a model it sends ServerLive, the empty unary call that all added latency is
// measured against. Calls use the async completion-queue API driven by
// `client_threads` threads (blocked in the queue, not spinning), so the client
// stays cheap when it shares the cores with the server.
// Errors: a failed ModelMetadata or an input shape that cannot be built. Failed
// or malformed replies do not stop the load; they are counted in the summary.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "bench/serving/latency_log.h"

namespace onyx::bench {

struct ServedLoadOptions {
  std::string address;      // HOST:PORT of onyxd's gRPC listener
  std::string model;        // "" = ServerLive
  int concurrency = 1;      // calls kept outstanding
  int64_t batch = 1;        // rows per ModelInfer request
  int client_threads = 1;   // threads reaping the completion queue
  double warmup_s = 0.5;    // calls completing before this are not logged
  double seconds = 3;       // measured window after the warm-up
  size_t log_capacity = size_t{1} << 22;
};

absl::StatusOr<LoadSummary> RunServedLoad(const ServedLoadOptions& options);

}  // namespace onyx::bench
