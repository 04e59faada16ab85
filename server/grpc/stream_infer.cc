#include "server/grpc/stream_infer.h"

#include <chrono>
#include <deque>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/grpc/stream_window.h"
#include "server/grpc/tsan_handoff.h"
#include "server/scheduling/overload.h"

namespace onyx::server {
namespace {

using inference::ModelInferRequest;
using inference::ModelStreamInferResponse;

class StreamInferReactor final
    : public grpc::ServerBidiReactor<ModelInferRequest, ModelStreamInferResponse> {
 public:
  explicit StreamInferReactor(const StreamInferOptions& options)
      : options_(options), window_({options.max_outstanding, options.max_buffer_bytes}) {
    Read();
  }

  void OnReadDone(bool ok) override {
    TakeBackFromGrpc(&read_);
    if (!ok) {  // half-close, cancellation or a broken stream: no more requests
      bool finish = false;
      {
        absl::MutexLock lock(&mu_);
        reads_done_ = true;
        finish = ShouldFinishLocked();
      }
      if (finish) Done();
      return;
    }
    auto call = std::make_shared<Call>();
    call->request.Swap(&read_);
    bool read_more = false;
    {
      absl::MutexLock lock(&mu_);
      window_.Started();
      read_more = window_.MayRead();
      read_paused_ = !read_more;
    }
    // A pending request keeps the stream from finishing meanwhile.
    if (read_more) Read();
    Launch(std::move(call));
    HandOffToGrpc(this);
  }

  void OnWriteDone(bool ok) override {
    TakeBackFromGrpc(&queue_);
    bool finish = false;
    bool resume = false;
    const ModelStreamInferResponse* next = nullptr;
    {
      absl::MutexLock lock(&mu_);
      window_.Written(queue_.front().bytes);
      queue_.pop_front();
      if (!ok) {
        broken_ = true;
        queue_.clear();
        window_.Clear();
      }
      if (!queue_.empty()) {
        next = &queue_.front().response;
      } else {
        writing_ = false;
        finish = ShouldFinishLocked();
      }
      resume = ResumeReadLocked();
    }
    if (resume) Read();
    if (next != nullptr) Write(next);
    if (finish) Done();
    HandOffToGrpc(this);
  }

  void OnDone() override {
    TakeBackFromGrpc(this);
    delete this;
  }

 private:
  struct Call {
    ModelInferRequest request;
    ModelStreamInferResponse response;
  };
  struct Reply {
    ModelStreamInferResponse response;
    int64_t bytes = 0;  // serialized size, as the window counts it
  };

  void Launch(std::shared_ptr<Call> call) {
    if (!options_.gate->Enter()) {
      // Not counted in the metrics, as ModelInfer's refusal at shutdown is not.
      Complete(call, absl::UnavailableError("server is shutting down")).IgnoreError();
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    StartInference(
        options_.env, &call->request, call->response.mutable_infer_response(),
        [this, call, start, metrics = options_.metrics, gate = options_.gate](
            const std::string& label, const std::string& version, const absl::Status& status) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // Complete may finish the stream, and the reactor may be
      // gone after it: nothing of `this` below.
      const absl::Status answered = Complete(call, status);
      metrics->RecordRequest(label, version, answered, seconds);
      gate->Exit();
        },
        InferCallOptions{absl::InfiniteFuture(), options_.is_cancelled});
  }

  // Turns `response` into the error reply for `status`.
  static void SetError(const ModelInferRequest& request, const absl::Status& status,
                       ModelStreamInferResponse& response) {
    response.set_error_message(std::string(status.message()));
    auto* infer = response.mutable_infer_response();
    infer->Clear();
    infer->set_model_name(request.model_name());
    infer->set_model_version(request.model_version());
    infer->set_id(request.id());
  }

  // Queues the reply of one request, or a short error when the client has
  // left the buffer full; returns the status the client gets. Runs once per
  // request.
  absl::Status Complete(const std::shared_ptr<Call>& call, absl::Status status) {
    ModelStreamInferResponse& response = call->response;
    if (!status.ok()) SetError(call->request, status, response);
    const int64_t bytes = static_cast<int64_t>(response.ByteSizeLong());
    bool finish = false;
    bool resume = false;
    const ModelStreamInferResponse* write = nullptr;
    {
      absl::MutexLock lock(&mu_);
      const bool fits = window_.Completed(bytes);
      if (!fits) {
        status = Rejected(
            absl::ResourceExhaustedError(absl::StrCat(
                "stream reply buffer full: ", window_.buffered_bytes(),
                " bytes of replies wait for the client to read them (max_stream_buffer_bytes ",
                window_.max_buffer_bytes(), "); read replies before sending more requests")),
            RejectionReason::kStreamBufferFull);
        SetError(call->request, status, response);
      }
      if (!broken_) {
        Reply& reply = queue_.emplace_back();
        reply.response = std::move(response);
        reply.bytes = fits ? bytes : static_cast<int64_t>(reply.response.ByteSizeLong());
        window_.Push(reply.bytes);
        if (!writing_) {
          writing_ = true;
          write = &queue_.back().response;
        }
      }
      finish = ShouldFinishLocked();
      resume = ResumeReadLocked();
    }
    // While writing_ is set (or a read is outstanding) the stream cannot
    // finish, so `this` stays valid.
    if (resume) Read();
    if (write != nullptr) Write(write);
    if (finish) Done();
    return status;
  }

  // The reactor's operations, each handing its buffer to gRPC first.
  void Read() {
    HandOffToGrpc(&read_);
    StartRead(&read_);
  }
  void Write(const ModelStreamInferResponse* response) {
    HandOffToGrpc(&queue_);
    StartWrite(response);
  }
  void Done() {
    HandOffToGrpc(this);
    Finish(grpc::Status::OK);
  }

  // True when reading was paused at the limit and may go on now; the caller
  // then starts the read (outside the lock).
  bool ResumeReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!read_paused_ || !window_.MayRead()) return false;
    read_paused_ = false;
    return true;
  }

  // True exactly once: when nothing more can be read, started or written.
  bool ShouldFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || !reads_done_ || window_.pending() > 0 || writing_) return false;
    finished_ = true;
    return true;
  }

  const StreamInferOptions options_;
  ModelInferRequest read_;  // owned by the outstanding read
  absl::Mutex mu_;
  std::deque<Reply> queue_ ABSL_GUARDED_BY(mu_);  // front is being written
  StreamWindow window_ ABSL_GUARDED_BY(mu_);      // started, buffered, their bytes
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
