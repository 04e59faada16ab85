#include "loadtest/waterfall.h"

#include <algorithm>

namespace onyx::load {

Waterfall ComputeWaterfall(const ModelLevelResult& m) {
  Waterfall w;
  if (m.service.count == 0) return w;
  w.client_ns = m.service.mean();
  const ServerModelLevel& s = m.server;
  double server = 0;
  if (s.have_stats && s.success_count > 0) {
    const double n = static_cast<double>(s.success_count);
    server = s.success_ns / n;
    w.queue_ns = s.queue_ns / n;
    w.compute_ns = (s.compute_input_ns + s.compute_infer_ns + s.compute_output_ns) / n;
    w.source = "ModelStatistics";
  } else if (s.have_metrics && s.request.count > 0) {
    server = s.request.sum / s.request.count * 1e9;
    w.queue_ns = s.queue.count > 0 ? s.queue.sum / s.queue.count * 1e9 : 0;
    w.compute_ns = s.compute.count > 0 ? s.compute.sum / s.compute.count * 1e9 : 0;
    w.source = "/metrics";
  } else {
    return w;
  }
  w.valid = true;
  w.other_ns = std::max(0.0, server - w.queue_ns - w.compute_ns);
  w.network_ns = w.client_ns - (w.queue_ns + w.compute_ns + w.other_ns);
  return w;
}

}  // namespace onyx::load
