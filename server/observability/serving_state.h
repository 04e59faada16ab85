// ServingState: whether the server as a whole takes traffic (readiness), shared
// by ServerReady and grpc.health.v1. Liveness is separate: a live process that
// is still loading, or draining after SIGTERM, is not ready.
// Thread-safe.
#pragma once

#include <atomic>

namespace onyx::server {

class ServingState {
 public:
  // Starts not serving; main sets it once startup is complete and clears it
  // first thing on SIGTERM.
  void SetServing(bool serving) { serving_.store(serving, std::memory_order_release); }
  bool serving() const { return serving_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> serving_{false};
};

}  // namespace onyx::server
