// Prometheus series about the repository's models, read at scrape time (no
// work on the request path except the engine's own relaxed-atomic kernel
// counters). Thread-safe.
//
//   auto registration =
//       metrics->AddCollectable(std::make_shared<ModelCollector>(repository.get()));
//   // destroy `registration` before the repository
//
// Series (labels; bounds are in README.md):
//   onyx_model_state{model,version,state}              gauge 1 for the current state, 0 for the others
//   onyx_model_load_duration_seconds{model,version}    gauge
//   onyx_queue_depth{model,version}                    gauge: requests waiting in the batcher
//   onyx_inflight_requests{model,version}              gauge: accepted, not completed
//   onyx_model_cpu_fallback_nodes{model,version,bucket} gauge (partition report)
//   onyx_model_partitions{model,version,bucket}         gauge
//   onyx_model_memcpy_nodes{model,version,bucket}       gauge
//   onyx_kernel_duration_seconds{model,version,op_type,provider}  histogram over
//       every node run of that op type (all buckets, warm-up runs included)
//   onyx_node_mean_seconds{model,version,node,op_type,provider}   gauge: the
//       kTopNodes nodes with the largest mean run time (all buckets together)
//   onyx_node_max_seconds{model,version,node,op_type,provider}    gauge: their longest run
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onyx/session.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "server/models/model_repository.h"

namespace onyx::server {

// Slowest nodes exported per model version.
inline constexpr size_t kTopNodes = 5;

// What the collector reads from one loaded model version.
struct ModelSnapshot {
  struct Bucket {
    std::string label;  // BucketSessions::bucket_label
    int64_t fallback_nodes = 0;
    int64_t partitions = 0;
    int64_t memcpy_nodes = 0;
  };
  std::string name;
  std::string version;
  double load_seconds = 0;
  int64_t queue_depth = 0;
  int64_t in_flight = 0;
  std::vector<Bucket> buckets;
  // Per (op type, provider) and per node, each summed over the buckets.
  std::vector<onyx::KernelStats> op_types;
  std::vector<onyx::KernelStats> nodes;
};

// Reads every loaded version of `repository`.
std::vector<ModelSnapshot> SnapshotModels(const ModelRepository& repository);

// The families above from an index and snapshots; pure (unit-tested).
std::vector<prometheus::MetricFamily> ModelFamilies(const std::vector<ModelStatus>& index,
                                                    const std::vector<ModelSnapshot>& models);

class ModelCollector final : public prometheus::Collectable {
 public:
  // `repository` must outlive every Collect() call.
  explicit ModelCollector(const ModelRepository* repository) : repository_(repository) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const ModelRepository* const repository_;
};

}  // namespace onyx::server
