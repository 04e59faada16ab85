// HealthService: grpc.health.v1.Health over the callback API.
//
//   HealthService health(&serving_state, [&](absl::string_view name) {
//     return repository->GetStatus(name);            // NOT_FOUND for unknown models
//   });
//   builder.RegisterService(&health);
//
// Check("") reports the server: SERVING while ServingState says so, else
// NOT_SERVING. Check(<model>) reports that model: SERVING when it is READY and the
// server is serving, else NOT_SERVING; an unknown name is the gRPC error
// NOT_FOUND. Watch streams the same status at once and then every change
// (SERVICE_UNKNOWN, stream kept open, for a name the repository does not list);
// changes are noticed by a poller every `poll_interval`, or at once after
// Notify(). A change that reverts within one interval may go unseen.
// Thread-safe.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "health.grpc.pb.h"
#include "server/models/model_repository.h"
#include "server/observability/serving_state.h"

namespace onyx::server {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  // Returns the model's status, or NOT_FOUND.
  using ModelStatusLookup = std::function<absl::StatusOr<ModelStatus>(absl::string_view)>;

  // `state` must outlive the service; `lookup` must be thread-safe.
  HealthService(const ServingState* state, ModelStatusLookup lookup,
                absl::Duration poll_interval = absl::Milliseconds(50));
  // Stops the poller. Destroy only after the gRPC server has shut down (which
  // ends every Watch).
  ~HealthService() override;

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* request,
                                  grpc::health::v1::HealthCheckResponse* response) override;

  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

  // The answer Check gives, without gRPC (for tests and logs).
  absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> StatusOf(
      absl::string_view service) const;

  // Re-evaluates every Watch now (call after a state change).
  void Notify();

 private:
  class Watcher;
  void PollLoop();
  // Watchers whose status changed and who are free to write; marks them writing.
  std::vector<Watcher*> CollectWritesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool PrepareWriteLocked(Watcher* watcher) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ServingState* const state_;
  const ModelStatusLookup lookup_;
  const absl::Duration poll_interval_;
  absl::Mutex mu_;
  std::set<Watcher*> watchers_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  std::thread poller_;
};

}  // namespace onyx::server
