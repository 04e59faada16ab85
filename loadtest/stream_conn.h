// StreamConn: one ModelStreamInfer stream that a Worker writes requests to
// (--streaming). Each request gets a fresh id appended to its pre-serialised
// bytes (a later field value wins in protobuf), so replies, which onyxd sends
// in completion order, are matched by id.
//
//   StreamConn s(worker, stub, method, &cq);  s.Open();
//   s.Write(pending, bytes, stats);           // any thread
//   s.Close();  ... s.closed() ...
//
// gRPC allows one outstanding write per stream, so writes queue behind each
// other; a request's service time starts when its write is issued. A stream
// that breaks fails its outstanding requests with its final status and every
// later one with UNAVAILABLE. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "loadtest/gate.h"
#include "loadtest/tag.h"
#include "loadtest/thread_stats.h"

namespace onyx::load {

class Worker;

class StreamConn {
 public:
  StreamConn(Worker* worker, grpc::GenericStub* stub, std::string method, grpc::CompletionQueue* cq);
  ~StreamConn();

  void Open();
  void Write(const Pending& p, const std::string& bytes, ThreadStats* stats);
  // Half-closes; closed() turns true once the server has finished the stream.
  void Close();
  bool closed() const { return closed_.load(); }
  void Cancel() { context_.TryCancel(); }

 private:
  class Event : public Tag {
   public:
    Event(StreamConn* s, void (StreamConn::*fn)(bool)) : s_(s), fn_(fn) {}
    void Proceed(bool ok) override { (s_->*fn_)(ok); }

   private:
    StreamConn* s_;
    void (StreamConn::*fn_)(bool);
  };
  struct Slot {
    bool used = false;
    Pending pending;
    int64_t sent_ns = 0;
  };
  struct Queued {
    uint64_t id;
    grpc::ByteBuffer buffer;
  };
  static constexpr uint64_t kSlots = 1 << 14;  // requests outstanding per stream

  void OnStarted(bool ok);
  void OnWritten(bool ok);
  void OnRead(bool ok);
  void OnWritesDone(bool ok);
  void OnFinished(bool ok);
  void IssueWrite(Queued q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailAll(const std::string& why);

  Worker* const worker_;
  grpc::GenericStub* const stub_;
  const std::string method_;
  grpc::CompletionQueue* const cq_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> stream_;
  Event started_{this, &StreamConn::OnStarted}, written_{this, &StreamConn::OnWritten},
      read_{this, &StreamConn::OnRead}, writes_done_{this, &StreamConn::OnWritesDone},
      finished_{this, &StreamConn::OnFinished};
  grpc::ByteBuffer reply_;
  grpc::Status status_;
  std::string peer_;
  std::atomic<bool> closed_{false};

  absl::Mutex mu_;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  std::string broken_reason_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::load
