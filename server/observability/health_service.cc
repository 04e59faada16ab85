#include "server/observability/health_service.h"

#include <utility>

#include "server/grpc/status_util.h"

namespace onyx::server {

using grpc::health::v1::HealthCheckResponse;

using grpc::health::v1::HealthCheckRequest;

// One Watch call. Every member is guarded by the service's mu_; gRPC
// operations are started after releasing it. The reactor cannot be deleted
// while `writing` is set (Finish waits for the write), which makes that safe.
class HealthService::Watcher final : public grpc::ServerWriteReactor<HealthCheckResponse> {
 public:
  Watcher(HealthService* service, std::string name) : service_(service), name(std::move(name)) {}

  void OnWriteDone(bool ok) override {
    bool finish = false;
    bool write = false;
    {
      absl::MutexLock lock(&service_->mu_);
      writing = false;
      if (!ok || cancelled) {
        finish = !finished;
        finished = true;
      } else {
        write = service_->PrepareWriteLocked(this);
      }
    }
    if (write) StartWrite(&out);
    if (finish) Finish(grpc::Status::CANCELLED);
  }

  void OnCancel() override {
    bool finish = false;
    {
      absl::MutexLock lock(&service_->mu_);
      cancelled = true;
      if (!writing && !finished) finish = finished = true;
    }
    if (finish) Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&service_->mu_);
      service_->watchers_.erase(this);
    }
    delete this;
  }

  HealthService* const service_;
  const std::string name;
  int last_sent = -1;
  bool writing = false;
  bool cancelled = false;
  bool finished = false;
  HealthCheckResponse out;
};

HealthService::HealthService(const ServingState* state, ModelStatusLookup lookup,
                             absl::Duration poll_interval)
    : state_(state), lookup_(std::move(lookup)), poll_interval_(poll_interval) {
  poller_ = std::thread([this] { PollLoop(); });
}

HealthService::~HealthService() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  poller_.join();
}

void HealthService::Notify() {
  absl::MutexLock lock(&mu_);
  notified_ = true;
}

bool HealthService::PrepareWriteLocked(Watcher* watcher) {
  if (watcher->writing || watcher->finished || watcher->cancelled) return false;
  absl::StatusOr<HealthCheckResponse::ServingStatus> status = StatusOf(watcher->name);
  const HealthCheckResponse::ServingStatus now =
      status.ok() ? *status : HealthCheckResponse::SERVICE_UNKNOWN;
  if (static_cast<int>(now) == watcher->last_sent) return false;
  watcher->last_sent = now;
  watcher->out.set_status(now);
  watcher->writing = true;
  return true;
}

std::vector<HealthService::Watcher*> HealthService::CollectWritesLocked() {
  std::vector<Watcher*> writes;
  for (Watcher* watcher : watchers_) {
    if (PrepareWriteLocked(watcher)) writes.push_back(watcher);
  }
  return writes;
}

void HealthService::PollLoop() {
  auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || notified_; };
  while (true) {
    std::vector<Watcher*> writes;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&wake), poll_interval_);
      if (stopping_) return;
      notified_ = false;
      writes = CollectWritesLocked();
    }
    for (Watcher* watcher : writes) watcher->StartWrite(&watcher->out);
  }
}

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext*, const HealthCheckRequest* request) {
  auto* watcher = new Watcher(this, request->service());
  bool write = false;
  {
    absl::MutexLock lock(&mu_);
    watchers_.insert(watcher);
    write = PrepareWriteLocked(watcher);
  }
  if (write) watcher->StartWrite(&watcher->out);
  return watcher;
}

absl::StatusOr<HealthCheckResponse::ServingStatus> HealthService::StatusOf(
    absl::string_view service) const {
  const bool serving = state_->serving();
  if (service.empty()) {
    return serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  }
  absl::StatusOr<ModelStatus> model = lookup_(service);
  if (!model.ok()) return model.status();
  return serving && model->state == ModelState::kReady ? HealthCheckResponse::SERVING
                                                       : HealthCheckResponse::NOT_SERVING;
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const grpc::health::v1::HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<HealthCheckResponse::ServingStatus> status = StatusOf(request->service());
  if (status.ok()) response->set_status(*status);
  reactor->Finish(ToGrpcStatus(status.status()));
  return reactor;
}

}  // namespace onyx::server
