// Metrics: the Prometheus registry of onyxd and its /metrics HTTP listener.
//
//   Metrics::Options options;
//   options.address = "0.0.0.0:8002";          // "" = registry only (tests)
//   ASSIGN_OR_RETURN(auto metrics, Metrics::Create(options));
//   metrics->RecordRequest("mlp", "1", absl::StatusCode::kOk, 0.0012);
//   auto registration = metrics->AddCollectable(std::make_shared<ModelCollector>(repository));
//   // ... read at every scrape until `registration` is destroyed
//
// Series recorded here (README.md lists every series onyxd exports):
//   onyx_requests_total{model,version,code}            ModelInfer calls by final status
//   onyx_request_duration_seconds{model,version}       arrival to reply
//   onyx_queue_duration_seconds{model,version}         waiting in the dynamic batcher
//   onyx_compute_duration_seconds{model,version}       the engine run that served it
//   onyx_batch_requests{model,version}                 requests merged into each engine run
//   onyx_batch_rows{model,version}                     rows (before padding) of each engine run
//   onyx_request_rejections_total{model,version,reason} requests refused for load (overload.h)
// plus the arena, process and build series (arena_collector.h,
// process_collector.h). Requests naming a model the repository does not have
// are counted under model="" and version="" so clients cannot grow the label
// set without bound; version is "" for requests no version took (the model or
// version was unknown or unavailable).
// The series objects of each (model, version) and model are resolved once and
// cached (prometheus' Family::Add builds and hashes a label map per call), so
// recording is a shared-lock map lookup plus atomic adds; the cache holds
// exactly the label sets already exported, so it is bounded like them.
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/scheduling/overload.h"

namespace onyx::server {

class Metrics;

// Keeps a collectable in a Metrics' scrapes; destroying it removes the
// collectable, waiting for a scrape that is reading it. Thread-compatible.
class CollectableRegistration {
 public:
  ~CollectableRegistration();
  CollectableRegistration(const CollectableRegistration&) = delete;
  CollectableRegistration& operator=(const CollectableRegistration&) = delete;

 private:
  friend class Metrics;
  CollectableRegistration(Metrics* metrics, std::shared_ptr<prometheus::Collectable> collectable)
      : metrics_(metrics), collectable_(std::move(collectable)) {}
  Metrics* const metrics_;
  const std::shared_ptr<prometheus::Collectable> collectable_;
};

class Metrics {
 public:
  struct Options {
    // HOST:PORT for /metrics; empty: no listener.
    std::string address;
    // onyx_build_info's version label.
    std::string version = "0.0.0";
  };

  // UNAVAILABLE when the listener cannot bind `address`.
  static absl::StatusOr<std::unique_ptr<Metrics>> Create(const Options& options);
  ~Metrics();

  // Counts one finished ModelInfer call and observes its duration.
  void RecordRequest(absl::string_view model, absl::string_view version, absl::StatusCode code,
                     double seconds);
  // The same from its final status; a status marked by overload.h's
  // Rejected() also counts one rejection for its reason.
  void RecordRequest(absl::string_view model, absl::string_view version, const absl::Status& status,
                     double seconds);

  // Observes one request that the model's scheduler ran: its queue wait and
  // the engine run's duration.
  void RecordTiming(absl::string_view model, absl::string_view version, double queued_seconds,
                    double compute_seconds);

  // Observes one engine run of the model's dynamic batcher: how many requests
  // it merged and their rows.
  void RecordBatch(absl::string_view model, absl::string_view version, int64_t requests,
                   int64_t rows);

  // Keeps the series of (model, version) while a returned handle lives. When
  // the last handle of a (model, version) goes, its request, queue, compute,
  // batch and rejection series leave /metrics, so that versions reloaded for
  // months do not keep every old version's histograms. Release a handle only
  // once nothing records for that (model, version) any more (the repository
  // releases it after the version's Model, whose drain runs the last
  // recording callbacks, is destroyed). Series recorded without a handle
  // (unknown models, version "") stay.
  [[nodiscard]] std::shared_ptr<void> HoldVersionSeries(absl::string_view model,
                                                        absl::string_view version);

  // Adds series read at every scrape (and by Serialize) until the returned
  // registration is destroyed; destroy it before what the collectable reads
  // goes away, and before this Metrics.
  [[nodiscard]] std::unique_ptr<CollectableRegistration> AddCollectable(
      std::shared_ptr<prometheus::Collectable> collectable);

  // The registry, for other components' series.
  prometheus::Registry& registry() { return *registry_; }

  // The Prometheus text exposition of every series (what /metrics serves).
  std::string Serialize() const;

  // Ports the listener bound (resolves port 0); empty without a listener.
  std::vector<int> ListeningPorts() const;

 private:
  friend class CollectableRegistration;
  Metrics();
  void Register(const std::shared_ptr<prometheus::Collectable>& collectable);
  void Unregister(const std::shared_ptr<prometheus::Collectable>& collectable);

  // The series of one (model, version) and of one model. Each pointer is null
  // until that series is first recorded (so only series that occurred are
  // exported, as with plain Family::Add), then never changes.
  struct VersionSeries {
    prometheus::Labels labels;  // model, version
    int holders = 0;            // HoldVersionSeries handles alive (guarded by series_mu_)
    std::atomic<prometheus::Histogram*> duration{nullptr};
    std::atomic<prometheus::Histogram*> queue{nullptr};
    std::atomic<prometheus::Histogram*> compute{nullptr};
    std::array<std::atomic<prometheus::Counter*>, 17> requests{};  // by absl::StatusCode
    std::atomic<prometheus::Histogram*> batch_requests{nullptr};
    std::atomic<prometheus::Histogram*> batch_rows{nullptr};
    std::array<std::atomic<prometheus::Counter*>, kRejectionReasonCount> rejections{};
  };
  VersionSeries& SeriesOf(absl::string_view model, absl::string_view version);
  void ReleaseVersionSeries(const std::string& model, const std::string& version);
  prometheus::Counter& RequestCounter(VersionSeries& series, absl::StatusCode code);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* durations_ = nullptr;
  prometheus::Family<prometheus::Histogram>* queue_durations_ = nullptr;
  prometheus::Family<prometheus::Histogram>* compute_durations_ = nullptr;
  prometheus::Family<prometheus::Histogram>* batch_requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* batch_rows_ = nullptr;
  prometheus::Family<prometheus::Counter>* rejections_ = nullptr;
  std::unique_ptr<prometheus::Exposer> exposer_;
  // Read under a shared lock on every request; written once per new label set.
  mutable absl::Mutex series_mu_;
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, std::unique_ptr<VersionSeries>>>
      version_series_ ABSL_GUARDED_BY(series_mu_);
  // Held while a collectable is read by Serialize or removed.
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server
