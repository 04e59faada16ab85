#include "server/observability/metrics.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"
#include "server/observability/arena_collector.h"
#include "server/observability/process_collector.h"

namespace onyx::server {
namespace {

// 50 µs .. 10 s, roughly 1-2.5-5 per decade.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,    0.1,    0.25,    0.5,    1.0,   2.5,    5.0,   10.0};
  return *buckets;
}

// 1 .. 256: batch sizes and requests per batch.
const prometheus::Histogram::BucketBoundaries& CountBuckets() {
  static const auto* buckets =
      new prometheus::Histogram::BucketBoundaries{1, 2, 4, 8, 16, 32, 64, 128, 256};
  return *buckets;
}

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("onyx_requests_total")
                   .Help(
                       "Inference requests (ModelInfer and each ModelStreamInfer request) by "
                       "model, version and final gRPC status code")
                   .Register(*registry_);
  durations_ = &prometheus::BuildHistogram()
                    .Name("onyx_request_duration_seconds")
                    .Help("Inference request latency from arrival to reply, in seconds")
                    .Register(*registry_);
  queue_durations_ = &prometheus::BuildHistogram()
                          .Name("onyx_queue_duration_seconds")
                          .Help("Time a request waited in its model's dynamic batcher, in seconds")
                          .Register(*registry_);
  compute_durations_ = &prometheus::BuildHistogram()
                            .Name("onyx_compute_duration_seconds")
                            .Help("Duration of the engine run that served a request, in seconds")
                            .Register(*registry_);
  batch_requests_ = &prometheus::BuildHistogram()
                         .Name("onyx_batch_requests")
                         .Help("Requests merged into one engine run by the dynamic batcher")
                         .Register(*registry_);
  batch_rows_ = &prometheus::BuildHistogram()
                     .Name("onyx_batch_rows")
                     .Help("Rows (before padding to a bucket) of one engine run")
                     .Register(*registry_);
  rejections_ =
      &prometheus::BuildCounter()
           .Name("onyx_request_rejections_total")
           .Help(
               "Inference requests refused for load, by model, version and reason (queue_full, "
               "model_inflight_bytes, server_inflight_bytes, deadline_on_arrival, "
               "deadline_in_queue, deadline_before_run, stream_buffer_full)")
           .Register(*registry_);
}

Metrics::~Metrics() = default;

absl::StatusOr<std::unique_ptr<Metrics>> Metrics::Create(const Options& options) {
  std::unique_ptr<Metrics> metrics(new Metrics());
  if (!options.address.empty()) {
    try {  // prometheus-cpp (civetweb) throws when it cannot bind
      metrics->exposer_ = std::make_unique<prometheus::Exposer>(options.address);
    } catch (const std::exception& e) {
      return absl::UnavailableError(
          absl::StrCat("metrics listener on ", options.address, ": ", e.what()));
    }
    metrics->exposer_->RegisterCollectable(metrics->registry_);
  }
  // Built in, registered for the life of the Metrics.
  metrics->Register(std::make_shared<ArenaCollector>());
  metrics->Register(std::make_shared<ProcessCollector>(options.version));
  return metrics;
}

namespace {

// The series in `slot`, adding it to `family` on first use. Family::Add
// returns the same object for the same labels, so a race between two first
// uses only stores the same pointer twice.
template <typename T, typename... Args>
T& Resolve(std::atomic<T*>& slot, prometheus::Family<T>* family, const prometheus::Labels& labels,
           const Args&... args) {
  if (T* series = slot.load(std::memory_order_acquire)) return *series;
  T* series = &family->Add(labels, args...);
  slot.store(series, std::memory_order_release);
  return *series;
}

}  // namespace

Metrics::VersionSeries& Metrics::SeriesOf(absl::string_view model, absl::string_view version) {
  {
    absl::ReaderMutexLock lock(&series_mu_);
    auto by_model = version_series_.find(model);
    if (by_model != version_series_.end()) {
      auto it = by_model->second.find(version);
      if (it != by_model->second.end()) return *it->second;
    }
  }
  absl::MutexLock lock(&series_mu_);
  std::unique_ptr<VersionSeries>& slot = version_series_[std::string(model)][std::string(version)];
  if (slot == nullptr) {
    slot = std::make_unique<VersionSeries>();
    slot->labels = {{"model", std::string(model)}, {"version", std::string(version)}};
  }
  return *slot;
}

std::shared_ptr<void> Metrics::HoldVersionSeries(absl::string_view model,
                                                 absl::string_view version) {
  VersionSeries& series = SeriesOf(model, version);
  {
    absl::MutexLock lock(&series_mu_);
    ++series.holders;
  }
  // A non-null token whose deleter gives the hold back.
  return std::shared_ptr<void>(
      this, [this, model = std::string(model), version = std::string(version)](void*) {
        ReleaseVersionSeries(model, version);
      });
}

namespace {

template <typename T>
void RemoveSeries(prometheus::Family<T>* family, std::atomic<T*>& slot) {
  if (T* series = slot.exchange(nullptr)) family->Remove(series);
}

}  // namespace

void Metrics::ReleaseVersionSeries(const std::string& model, const std::string& version) {
  absl::MutexLock lock(&series_mu_);
  auto by_model = version_series_.find(model);
  if (by_model == version_series_.end()) return;
  auto it = by_model->second.find(version);
  if (it == by_model->second.end() || --it->second->holders > 0) return;
  VersionSeries& series = *it->second;
  RemoveSeries(durations_, series.duration);
  RemoveSeries(queue_durations_, series.queue);
  RemoveSeries(compute_durations_, series.compute);
  RemoveSeries(batch_requests_, series.batch_requests);
  RemoveSeries(batch_rows_, series.batch_rows);
  for (auto& slot : series.requests) RemoveSeries(requests_, slot);
  for (auto& slot : series.rejections) RemoveSeries(rejections_, slot);
  by_model->second.erase(it);
  if (by_model->second.empty()) version_series_.erase(by_model);
}

prometheus::Counter& Metrics::RequestCounter(VersionSeries& series, absl::StatusCode code) {
  size_t index = static_cast<size_t>(code);
  if (index >= series.requests.size()) index = static_cast<size_t>(absl::StatusCode::kUnknown);
  std::atomic<prometheus::Counter*>& slot = series.requests[index];
  if (prometheus::Counter* counter = slot.load(std::memory_order_acquire)) return *counter;
  prometheus::Labels labels = series.labels;
  labels["code"] = absl::StatusCodeToString(static_cast<absl::StatusCode>(index));
  return Resolve(slot, requests_, labels);
}

void Metrics::RecordRequest(absl::string_view model, absl::string_view version,
                            absl::StatusCode code, double seconds) {
  VersionSeries& series = SeriesOf(model, version);
  RequestCounter(series, code).Increment();
  Resolve(series.duration, durations_, series.labels, LatencyBuckets()).Observe(seconds);
}

void Metrics::RecordRequest(absl::string_view model, absl::string_view version,
                            const absl::Status& status, double seconds) {
  RecordRequest(model, version, status.code(), seconds);
  const std::optional<RejectionReason> reason = RejectionReasonOf(status);
  if (!reason) return;
  VersionSeries& series = SeriesOf(model, version);
  std::atomic<prometheus::Counter*>& slot = series.rejections[static_cast<size_t>(*reason)];
  prometheus::Labels labels = series.labels;
  labels["reason"] = std::string(RejectionReasonName(*reason));
  Resolve(slot, rejections_, labels).Increment();
}

void Metrics::RecordTiming(absl::string_view model, absl::string_view version,
                           double queued_seconds, double compute_seconds) {
  VersionSeries& series = SeriesOf(model, version);
  Resolve(series.queue, queue_durations_, series.labels, LatencyBuckets()).Observe(queued_seconds);
  Resolve(series.compute, compute_durations_, series.labels, LatencyBuckets())
      .Observe(compute_seconds);
}

void Metrics::RecordBatch(absl::string_view model, absl::string_view version, int64_t requests,
                          int64_t rows) {
  VersionSeries& series = SeriesOf(model, version);
  Resolve(series.batch_requests, batch_requests_, series.labels, CountBuckets())
      .Observe(static_cast<double>(requests));
  Resolve(series.batch_rows, batch_rows_, series.labels, CountBuckets())
      .Observe(static_cast<double>(rows));
}

CollectableRegistration::~CollectableRegistration() { metrics_->Unregister(collectable_); }

std::unique_ptr<CollectableRegistration> Metrics::AddCollectable(
    std::shared_ptr<prometheus::Collectable> collectable) {
  Register(collectable);
  return std::unique_ptr<CollectableRegistration>(
      new CollectableRegistration(this, std::move(collectable)));
}

void Metrics::Register(const std::shared_ptr<prometheus::Collectable>& collectable) {
  if (exposer_ != nullptr) exposer_->RegisterCollectable(collectable);
  absl::MutexLock lock(&mu_);
  collectables_.push_back(collectable);
}

void Metrics::Unregister(const std::shared_ptr<prometheus::Collectable>& collectable) {
  // The exposer removes it under the lock its scrapes hold while collecting.
  if (exposer_ != nullptr) exposer_->RemoveCollectable(collectable);
  absl::MutexLock lock(&mu_);
  collectables_.erase(std::remove(collectables_.begin(), collectables_.end(), collectable),
                      collectables_.end());
}

std::string Metrics::Serialize() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  absl::MutexLock lock(&mu_);
  for (const auto& collectable : collectables_) {
    for (auto& family : collectable->Collect()) families.push_back(std::move(family));
  }
  return prometheus::TextSerializer().Serialize(families);
}

std::vector<int> Metrics::ListeningPorts() const {
  if (exposer_ == nullptr) return {};
  return exposer_->GetListeningPorts();
}

}  // namespace onyx::server
