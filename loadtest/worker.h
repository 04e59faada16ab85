// Worker: one client event loop. It owns a completion queue, a reaper thread
// that blocks on it and timestamps every reply the moment it arrives, and the
// channels it sends on; the runner lends it a pacer thread per phase.
//
//   Worker w(config);  w.Start();
//   std::thread pacer([&] { w.RunPhase(&phase); });   // returns when the schedule is done
//   ... runner waits for phase.outstanding == 0 ...
//   w.Stop();
//
// Open loop: the pacer sleeps to each absolute send time of its share of the
// schedule (ArrivalStream), records how late it woke, and sends — or hands
// the request to the --max-inflight Gate. Closed loop: the pacer starts the
// worker's share of the calls and the reaper starts the next one as each
// completes. Requests are pre-serialised bytes sent through gRPC's generic
// stub (unary) or written to ModelStreamInfer streams (--streaming).
//
// Thread-safe as described: RunPhase on one thread at a time, Stop once.
#pragma once

#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"
#include "loadtest/channels.h"
#include "loadtest/gate.h"
#include "loadtest/phase_context.h"
#include "loadtest/request_builder.h"
#include "loadtest/thread_stats.h"
#include "loadtest/trace.h"

namespace onyx::load {

class StreamConn;
struct UnaryCall;

struct WorkerConfig {
  int index = 0;
  int count = 1;  // workers in all
  const std::vector<ModelWork>* models = nullptr;
  std::vector<double> cumulative_weights;  // model mix, ending at 1
  ChannelPool* channels = nullptr;
  std::vector<int> channel_ids;  // the channels this worker sends on
  Gate* gate = nullptr;          // --max-inflight, or null
  bool poisson = false;
  bool streaming = false;
  bool validate = false;
  double timeout_s = 0;  // 0: no deadline
  uint64_t seed = 1;
  TraceWriter* trace = nullptr;  // --trace, or null
};

class Worker {
 public:
  explicit Worker(WorkerConfig config);
  ~Worker();

  // Starts the reaper (and opens the streams under --streaming).
  void Start();
  // Runs this worker's share of `phase` on the calling thread: the whole
  // schedule (open loop), or the initial calls and then a wait while the
  // phase is sending (closed loop). Returns when nothing is left to dispatch.
  void RunPhase(PhaseContext* phase);
  // Closes the streams, drains the queue and joins the reaper.
  void Stop();
  // Cancels every call and stream still outstanding (they complete as
  // CANCELLED): the runner's way out when a phase does not drain.
  void CancelOutstanding();

  ThreadStats* pacer_stats() { return &pacer_stats_; }
  ThreadStats* reaper_stats() { return &reaper_stats_; }
  int64_t inflight() const { return inflight_.load(std::memory_order_relaxed); }

  // Called through the call and stream tags (reaper), or by a stream that
  // cannot send (the sending thread, with its own stats).
  void OnUnaryDone(UnaryCall* call, bool ok);
  void Complete(const Pending& p, int64_t sent_ns, int64_t done_ns, int code, absl::string_view message,
                absl::string_view peer, grpc::ByteBuffer* reply, bool streamed, ThreadStats* stats);
  ThreadStats* reaper_stats_for_streams() { return &reaper_stats_; }
  PhaseContext* phase() const { return phase_.load(std::memory_order_acquire); }

 private:
  void ReapLoop();
  void Send(const Pending& p, ThreadStats* stats);
  int PickModel(std::mt19937_64* rng);
  int NextVariant(int model);
  std::string Validate(int model, int variant, grpc::ByteBuffer* reply, bool streamed);
  UnaryCall* TakeCall();

  const WorkerConfig config_;
  grpc::CompletionQueue cq_;
  std::thread reaper_;
  ThreadStats pacer_stats_, reaper_stats_;
  std::atomic<int64_t> inflight_{0};
  std::atomic<PhaseContext*> phase_{nullptr};
  std::mt19937_64 pacer_rng_, reaper_rng_;
  std::vector<std::atomic<uint32_t>> variant_counters_;
  std::atomic<uint32_t> channel_counter_{0};
  std::vector<std::unique_ptr<StreamConn>> streams_;
  struct Peer {
    std::string address;  // ClientContext::peer() of a recent call on the channel
    uint32_t calls = 0;
  };
  std::vector<Peer> peers_;                     // by channel; reaper only
  std::unique_ptr<TraceWriter::Buffer> trace_;  // written by the reaper only

  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<UnaryCall>> calls_ ABSL_GUARDED_BY(pool_mu_);
  std::vector<UnaryCall*> free_calls_ ABSL_GUARDED_BY(pool_mu_);
};

}  // namespace onyx::load
