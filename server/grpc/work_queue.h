// WorkQueue: a fixed set of threads that run submitted closures in order, with
// a bounded backlog — for RPC handlers whose work blocks (model loads,
// profiling waits), so that no gRPC thread blocks and no thread is started per
// call.
//
//   WorkQueue loads("repository", /*threads=*/1, /*max_pending=*/64);
//   RETURN_IF_ERROR(loads.Submit([=] { reactor->Finish(...); }));
//
// Submit refuses work beyond max_pending waiting closures with
// RESOURCE_EXHAUSTED naming the queue. The destructor runs every closure
// already accepted, then joins the threads.
// Thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace onyx::server {

class WorkQueue {
 public:
  WorkQueue(std::string name, int threads, size_t max_pending);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  absl::Status Submit(absl::AnyInvocable<void()> work);

 private:
  void Loop();

  const std::string name_;
  const size_t max_pending_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> pending_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace onyx::server
