// The waterfall of one model's level: where the client's mean service time
// went — network and gRPC (client minus server), then the server's queue,
// then compute, then what else the server spent (parsing, reply).
//
//   Waterfall w = ComputeWaterfall(level.models[0]);
//   if (w.valid) ... w.client_ns == w.network_ns + w.queue_ns + w.compute_ns + w.other_ns
//
// Means, because means add up and percentiles do not. Server figures come
// from the ModelStatistics deltas (exact sums), else from the /metrics
// histograms' _sum/_count. Pure; thread-safe.
#pragma once

#include <string>

#include "loadtest/result.h"

namespace onyx::load {

struct Waterfall {
  bool valid = false;
  std::string source;  // "ModelStatistics" or "/metrics"
  double client_ns = 0, network_ns = 0, queue_ns = 0, compute_ns = 0, other_ns = 0;
};

Waterfall ComputeWaterfall(const ModelLevelResult& m);

}  // namespace onyx::load
