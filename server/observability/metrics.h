// Metrics: the Prometheus registry of onyxd and its /metrics HTTP listener.
//
//   Metrics::Options options;
//   options.address = "0.0.0.0:8002";          // "" = registry only (tests)
//   ASSIGN_OR_RETURN(auto metrics, Metrics::Create(options));
//   metrics->RecordRequest("mlp", absl::StatusCode::kOk, 0.0012);
//
// Series:
//   onyx_requests_total{model,code}             ModelInfer calls by final status
//   onyx_request_duration_seconds{model}        ModelInfer latency, arrival to reply
//   onyx_batch_requests{model}                  requests merged into each engine run
//   onyx_batch_rows{model}                      rows (before padding) of each engine run
// Requests naming a model the repository does not have are counted under
// model="" so clients cannot grow the label set without bound.
// Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/observability/arena_collector.h"

namespace onyx::server {

class Metrics {
 public:
  struct Options {
    // HOST:PORT for /metrics; empty: no listener.
    std::string address;
  };

  // UNAVAILABLE when the listener cannot bind `address`.
  static absl::StatusOr<std::unique_ptr<Metrics>> Create(const Options& options);
  ~Metrics();

  // Counts one finished ModelInfer call and observes its duration.
  void RecordRequest(absl::string_view model, absl::StatusCode code, double seconds);

  // Observes one engine run of the model's dynamic batcher: how many requests
  // it merged and their rows.
  void RecordBatch(absl::string_view model, int64_t requests, int64_t rows);

  // The registry, for other components' series.
  prometheus::Registry& registry() { return *registry_; }

  // The Prometheus text exposition of every series (what /metrics serves).
  std::string Serialize() const;

  // Ports the listener bound (resolves port 0); empty without a listener.
  std::vector<int> ListeningPorts() const;

 private:
  Metrics();

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* durations_ = nullptr;
  prometheus::Family<prometheus::Histogram>* batch_requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* batch_rows_ = nullptr;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<ArenaCollector> arena_ = std::make_shared<ArenaCollector>();
};

}  // namespace onyx::server
