#include "loadtest/worker.h"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "grpcpp/support/proto_buffer_reader.h"
#include "loadtest/clock.h"
#include "loadtest/schedule.h"
#include "loadtest/stream_conn.h"
#include "loadtest/tag.h"

namespace onyx::load {

// One unary call; recycled through the worker's pool (a ClientContext cannot
// be reused, so it is rebuilt in place).
struct UnaryCall : Tag {
  Worker* worker = nullptr;
  std::optional<grpc::ClientContext> context;
  grpc::ByteBuffer reply;
  grpc::Status status;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader;
  Pending pending;
  int64_t sent_ns = 0;
  int channel = 0;         // index into the worker's channel_ids
  bool in_flight = false;  // guarded by the worker's pool_mu_, as is `context`
  void Proceed(bool ok) override { worker->OnUnaryDone(this, ok); }
};

Worker::Worker(WorkerConfig config)
    : config_(std::move(config)),
      pacer_stats_(static_cast<int>(config_.models->size())),
      reaper_stats_(static_cast<int>(config_.models->size())),
      pacer_rng_(MixSeed(config_.seed, 2000 + config_.index)),
      reaper_rng_(MixSeed(config_.seed, 3000 + config_.index)),
      variant_counters_(config_.models->size()),
      peers_(config_.channel_ids.size()) {
  if (config_.trace != nullptr) trace_ = std::make_unique<TraceWriter::Buffer>(config_.trace);
}

Worker::~Worker() { Stop(); }

void Worker::Start() {
  reaper_ = std::thread([this] { ReapLoop(); });
  if (!config_.streaming) return;
  for (int id : config_.channel_ids) {
    // One stream per channel per model: a stream belongs to one method, and
    // onyxd serves any model on any stream, so one per channel is enough.
    streams_.push_back(
        std::make_unique<StreamConn>(this, config_.channels->generic(id), (*config_.models)[0].method, &cq_));
    streams_.back()->Open();
  }
}

void Worker::Stop() {
  if (!reaper_.joinable()) return;
  for (auto& s : streams_) s->Close();
  const int64_t give_up = NowNs() + 5'000'000'000;
  for (auto& s : streams_) {
    while (!s->closed() && NowNs() < give_up) SleepUntilNs(NowNs() + 1'000'000);
    if (!s->closed()) s->Cancel();
  }
  for (auto& s : streams_) {
    while (!s->closed() && NowNs() < give_up + 1'000'000'000) SleepUntilNs(NowNs() + 1'000'000);
  }
  cq_.Shutdown();
  reaper_.join();
  if (trace_) trace_->Flush();
}

void Worker::ReapLoop() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_.Next(&tag, &ok)) static_cast<Tag*>(tag)->Proceed(ok);
}

int Worker::PickModel(std::mt19937_64* rng) {
  if (config_.cumulative_weights.size() <= 1) return 0;
  const double u = std::uniform_real_distribution<double>(0, 1)(*rng);
  const auto& w = config_.cumulative_weights;
  return static_cast<int>(std::min<size_t>(std::upper_bound(w.begin(), w.end(), u) - w.begin(), w.size() - 1));
}

int Worker::NextVariant(int model) {
  const size_t n = (*config_.models)[model].variants.size();
  if (n <= 1) return 0;
  return static_cast<int>(variant_counters_[model].fetch_add(1, std::memory_order_relaxed) % n);
}

void Worker::RunPhase(PhaseContext* phase) {
  phase_.store(phase, std::memory_order_release);
  const Phase& plan = *phase->phase;
  if (!plan.open_loop) {
    const int share = plan.concurrency / config_.count + (config_.index < plan.concurrency % config_.count ? 1 : 0);
    for (int i = 0; i < share; ++i) {
      const int64_t now = NowNs();
      Pending p{now, phase->LevelOf(now), PickModel(&pacer_rng_), 0};
      p.variant = NextVariant(p.model);
      if (p.level >= 0 && phase->request_budget > 0 && phase->measured_sends.fetch_add(1) >= phase->request_budget) {
        phase->sending = false;
        break;
      }
      pacer_stats_.RecordDispatch(p.level, p.model, -1, false);
      phase->outstanding.fetch_add(1);
      Send(p, &pacer_stats_);
    }
    return;
  }
  // Precise wake-ups: the kernel's default 50 us timer slack would show up as send lag.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  ArrivalStream arrivals(&plan.profile, config_.poisson, config_.seed, config_.index, config_.count);
  const double end = plan.end_s();
  // A generator still sending a second after its schedule ended cannot keep
  // up; the rest of the schedule is counted (late, and dropped) but not
  // sent, so that a saturated run ends instead of sending for minutes.
  const int64_t give_up_ns = phase->t0_ns + static_cast<int64_t>(end * 1e9) + 1'000'000'000;
  bool behind = false;
  for (double t = arrivals.Next(); t < end; t = arrivals.Next()) {
    const int64_t intended = phase->t0_ns + static_cast<int64_t>(std::llround(t * 1e9));
    if (!behind && intended > NowNs()) SleepUntilNs(intended);
    const int64_t now = NowNs();
    behind = behind || now > give_up_ns;
    Pending p{intended, phase->LevelOf(intended), PickModel(&pacer_rng_), 0};
    p.variant = NextVariant(p.model);
    if (behind) {
      pacer_stats_.RecordDispatch(p.level, p.model, now - intended, /*dropped=*/true);
      continue;
    }
    const Gate::Admission admission = config_.gate ? config_.gate->Admit(p) : Gate::kSend;
    pacer_stats_.RecordDispatch(p.level, p.model, now - intended, admission == Gate::kDropped);
    if (admission == Gate::kDropped) continue;
    phase->outstanding.fetch_add(1);
    if (admission == Gate::kSend) Send(p, &pacer_stats_);
  }
}

void Worker::Send(const Pending& p, ThreadStats* stats) {
  inflight_.fetch_add(1, std::memory_order_relaxed);
  const ModelWork& model = (*config_.models)[p.model];
  if (config_.streaming) {
    const uint32_t i = channel_counter_.fetch_add(1, std::memory_order_relaxed);
    streams_[i % streams_.size()]->Write(p, model.variants[p.variant].bytes, stats);
    return;
  }
  UnaryCall* call = TakeCall();
  call->pending = p;
  if (config_.timeout_s > 0) {
    call->context->set_deadline(std::chrono::system_clock::now() +
                                std::chrono::microseconds(static_cast<int64_t>(config_.timeout_s * 1e6)));
  }
  const std::string& bytes = model.variants[p.variant].bytes;
  grpc::Slice slice(bytes.data(), bytes.size(), grpc::Slice::STATIC_SLICE);
  grpc::ByteBuffer request(&slice, 1);
  const uint32_t i = channel_counter_.fetch_add(1, std::memory_order_relaxed);
  call->channel = static_cast<int>(i % config_.channel_ids.size());
  grpc::GenericStub* stub = config_.channels->generic(config_.channel_ids[call->channel]);
  call->reader = stub->PrepareUnaryCall(&*call->context, model.method, request, &cq_);
  call->sent_ns = NowNs();
  call->reader->StartCall();
  call->reader->Finish(&call->reply, &call->status, call);
  PhaseContext* phase = phase_.load(std::memory_order_acquire);
  if (phase->InSpan(p.level, call->sent_ns)) stats->RecordSentInSpan(p.level, p.model);
}

UnaryCall* Worker::TakeCall() {
  absl::MutexLock lock(&pool_mu_);
  UnaryCall* call;
  if (free_calls_.empty()) {
    calls_.push_back(std::make_unique<UnaryCall>());
    call = calls_.back().get();
    call->worker = this;
  } else {
    call = free_calls_.back();
    free_calls_.pop_back();
  }
  call->context.emplace();
  call->in_flight = true;
  return call;
}

void Worker::CancelOutstanding() {
  {
    absl::MutexLock lock(&pool_mu_);
    for (auto& call : calls_) {
      if (call->in_flight) call->context->TryCancel();
    }
  }
  for (auto& s : streams_) s->Cancel();
}

void Worker::OnUnaryDone(UnaryCall* call, bool ok) {
  const int64_t now = NowNs();
  const int code = ok ? call->status.error_code() : grpc::StatusCode::UNKNOWN;
  // The backend behind a channel is looked up now and then, not on every call:
  // ClientContext::peer() allocates.
  Peer& peer = peers_[call->channel];
  if (peer.address.empty() || ++peer.calls % 1024 == 0) peer.address = call->context->peer();
  Complete(call->pending, call->sent_ns, now, code, call->status.error_message(), peer.address, &call->reply, false,
           &reaper_stats_);
  call->reader.reset();
  call->reply.Clear();
  call->status = grpc::Status();
  absl::MutexLock lock(&pool_mu_);
  call->in_flight = false;
  call->context.reset();
  free_calls_.push_back(call);
}

void Worker::Complete(const Pending& p, int64_t sent_ns, int64_t done_ns, int code, absl::string_view message,
                      absl::string_view peer, grpc::ByteBuffer* reply, bool streamed, ThreadStats* stats) {
  std::string mismatch;
  if (code == 0 && config_.validate && reply != nullptr) {
    mismatch = Validate(p.model, p.variant, reply, streamed);
    if (!mismatch.empty()) {
      code = kMismatch;
      message = mismatch;
    }
  }
  stats->RecordCompletion({p.level, p.model, p.intended_ns, sent_ns, done_ns, code, message, peer});
  if (trace_ && stats == &reaper_stats_) trace_->Add(p.level, p.model, p.intended_ns, sent_ns, done_ns, code);
  inflight_.fetch_sub(1, std::memory_order_relaxed);
  PhaseContext* phase = phase_.load(std::memory_order_acquire);
  // The next request takes this one's place before it stops counting as
  // outstanding, so the runner never sees a drained phase that is not.
  if (config_.gate != nullptr) {
    Pending next;
    if (config_.gate->Release(&next)) Send(next, stats);
  } else if (!phase->phase->open_loop && phase->sending.load(std::memory_order_relaxed)) {
    const int64_t now = NowNs();
    Pending q{now, phase->LevelOf(now), PickModel(&reaper_rng_), 0};
    q.variant = NextVariant(q.model);
    const bool over_budget =
        q.level >= 0 && phase->request_budget > 0 && phase->measured_sends.fetch_add(1) >= phase->request_budget;
    if (over_budget) {
      phase->sending = false;
    } else if (const double end = phase->phase->end_s();
               !std::isfinite(end) || now < phase->t0_ns + static_cast<int64_t>(end * 1e9)) {
      stats->RecordDispatch(q.level, q.model, -1, false);
      phase->outstanding.fetch_add(1);
      Send(q, stats);
    }
  }
  phase->outstanding.fetch_sub(1);
}

std::string Worker::Validate(int model, int variant, grpc::ByteBuffer* reply, bool streamed) {
  const RequestVariant& want = (*config_.models)[model].variants[variant];
  inference::ModelStreamInferResponse stream_reply;
  inference::ModelInferResponse unary_reply;
  inference::ModelInferResponse* r = &unary_reply;
  grpc::ProtoBufferReader reader(reply);
  const bool parsed =
      streamed ? stream_reply.ParseFromZeroCopyStream(&reader) : unary_reply.ParseFromZeroCopyStream(&reader);
  if (!parsed) return "reply does not parse as a ModelInferResponse";
  if (streamed) r = stream_reply.mutable_infer_response();
  for (const auto& [name, expected] : want.expected) {
    int found = -1;
    for (int i = 0; i < r->outputs_size(); ++i) {
      if (r->outputs(i).name() == name) found = i;
    }
    if (found < 0) return "output '" + name + "' missing from the reply";
    const auto& out = r->outputs(found);
    if (found >= r->raw_output_contents_size()) return "output '" + name + "' has no raw contents";
    std::vector<int64_t> shape(out.shape().begin(), out.shape().end());
    std::string diff = CompareOutput(expected, out.datatype(), shape, r->raw_output_contents(found));
    if (!diff.empty()) return diff;
  }
  return "";
}

}  // namespace onyx::load
