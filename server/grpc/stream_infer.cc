#include "server/grpc/stream_infer.h"

#include <chrono>
#include <deque>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace onyx::server {
namespace {

using inference::ModelInferRequest;
using inference::ModelStreamInferResponse;

class StreamInferReactor final
    : public grpc::ServerBidiReactor<ModelInferRequest, ModelStreamInferResponse> {
 public:
  explicit StreamInferReactor(const StreamInferOptions& options) : options_(options) {
    StartRead(&read_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // half-close, cancellation or a broken stream: no more requests
      bool finish = false;
      {
        absl::MutexLock lock(&mu_);
        reads_done_ = true;
        finish = ShouldFinishLocked();
      }
      if (finish) Finish(grpc::Status::OK);
      return;
    }
    auto call = std::make_shared<Call>();
    call->request.Swap(&read_);
    bool read_more = false;
    {
      absl::MutexLock lock(&mu_);
      ++pending_;
      read_more = OutstandingLocked() < options_.max_outstanding;
      read_paused_ = !read_more;
    }
    // pending_ > 0 keeps the stream from finishing meanwhile.
    if (read_more) StartRead(&read_);
    Launch(std::move(call));
  }

  void OnWriteDone(bool ok) override {
    bool finish = false;
    bool resume = false;
    const ModelStreamInferResponse* next = nullptr;
    {
      absl::MutexLock lock(&mu_);
      queue_.pop_front();
      if (!ok) {
        broken_ = true;
        queue_.clear();
      }
      if (!queue_.empty()) {
        next = &queue_.front();
      } else {
        writing_ = false;
        finish = ShouldFinishLocked();
      }
      resume = ResumeReadLocked();
    }
    if (resume) StartRead(&read_);
    if (next != nullptr) StartWrite(next);
    if (finish) Finish(grpc::Status::OK);
  }

  void OnDone() override { delete this; }

 private:
  struct Call {
    ModelInferRequest request;
    ModelStreamInferResponse response;
  };

  void Launch(std::shared_ptr<Call> call) {
    if (!options_.gate->Enter()) {
      Complete(call, "", absl::UnavailableError("server is shutting down"));
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    StartInference(options_.env, &call->request, call->response.mutable_infer_response(),
                   [this, call, start](const std::string& label, const std::string& version,
                                       const absl::Status& status) {
                     const double seconds = std::chrono::duration<double>(
                                                std::chrono::steady_clock::now() - start)
                                                .count();
                     options_.metrics->RecordRequest(label, version, status.code(), seconds);
                     options_.gate->Exit();
                     Complete(call, label, status);
                   },
                   InferCallOptions{absl::InfiniteFuture(), options_.is_cancelled});
  }

  // Queues the reply of one request; runs once per request.
  void Complete(const std::shared_ptr<Call>& call, const std::string&, const absl::Status& status) {
    ModelStreamInferResponse& response = call->response;
    if (!status.ok()) {
      response.set_error_message(std::string(status.message()));
      auto* infer = response.mutable_infer_response();
      infer->Clear();
      infer->set_model_name(call->request.model_name());
      infer->set_model_version(call->request.model_version());
      infer->set_id(call->request.id());
    }
    bool finish = false;
    bool resume = false;
    const ModelStreamInferResponse* write = nullptr;
    {
      absl::MutexLock lock(&mu_);
      --pending_;
      if (!broken_) {
        queue_.push_back(std::move(response));
        if (!writing_) {
          writing_ = true;
          write = &queue_.back();
        }
      }
      finish = ShouldFinishLocked();
      resume = ResumeReadLocked();
    }
    // While writing_ is set (or a read is outstanding) the stream cannot
    // finish, so `this` stays valid.
    if (resume) StartRead(&read_);
    if (write != nullptr) StartWrite(write);
    if (finish) Finish(grpc::Status::OK);
  }

  // Requests started and not yet answered, plus answers not yet written: what
  // a client that sends without reading makes the server hold.
  int64_t OutstandingLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pending_ + static_cast<int64_t>(queue_.size());
  }

  // True when reading was paused at the limit and may go on now; the caller
  // then starts the read (outside the lock).
  bool ResumeReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!read_paused_ || OutstandingLocked() >= options_.max_outstanding) return false;
    read_paused_ = false;
    return true;
  }

  // True exactly once: when nothing more can be read, started or written.
  bool ShouldFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || !reads_done_ || pending_ > 0 || writing_) return false;
    finished_ = true;
    return true;
  }

  const StreamInferOptions options_;
  ModelInferRequest read_;  // owned by the outstanding read
  absl::Mutex mu_;
  std::deque<ModelStreamInferResponse> queue_ ABSL_GUARDED_BY(mu_);  // front is being written
  int64_t pending_ ABSL_GUARDED_BY(mu_) = 0;                         // started, not yet queued
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;  // no read outstanding: at the limit
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

grpc::ServerBidiReactor<ModelInferRequest, ModelStreamInferResponse>* NewStreamInferReactor(
    const StreamInferOptions& options) {
  return new StreamInferReactor(options);
}

}  // namespace onyx::server
