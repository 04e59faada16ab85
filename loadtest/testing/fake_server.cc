// onyx_load_fake_server: a KServe v2 server for onyx-load's own tests. It
// answers every ModelInfer (and every ModelStreamInfer request) after a
// fixed latency with the input echoed as the output, and stops answering for
// --pause-for seconds at a known moment: --pause-at seconds after the first
// inference request. Everything that arrives during the pause, or would be
// answered during it, is answered when the pause ends — a stop-the-world
// stall, the case that exposes coordinated omission.
//
//   onyx_load_fake_server --address 127.0.0.1:0 [--latency 200us] [--pause-at 5s --pause-for 1s]
//                         [--error-every N] [--serial 1] [--model NAME[,NAME...]]
//
// Prints "listening on HOST:PORT" on stdout once ready. Serves ServerLive,
// ServerMetadata, ModelMetadata (input "input", output "output": FP32
// [-1, 4]), ModelInfer, ModelStreamInfer and ModelStatistics (counts and
// summed times). --error-every N fails every N-th inference request with
// UNAVAILABLE "fake: planned failure". --serial 1 serves one request at a time
// (a single-server queue: capacity 1/latency per second), so latency rises
// with load. --model names the models served (all alike). Runs until
// SIGTERM/SIGINT.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <functional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "grpc_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "loadtest/clock.h"
#include "loadtest/units.h"

namespace onyx::load {
namespace {

// Runs callbacks at absolute times, from one thread.
class Replier {
 public:
  Replier() : thread_([this] { Loop(); }) {}
  ~Replier() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
      cv_.Signal();
    }
    thread_.join();
  }
  void At(int64_t due_ns, std::function<void()> fn) {
    absl::MutexLock lock(&mu_);
    heap_.push({due_ns, seq_++, std::move(fn)});
    cv_.Signal();  // it may be due before what the loop is waiting for
  }

 private:
  struct Item {
    int64_t due;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Item& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  void Loop() {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    for (;;) {
      std::function<void()> fn;
      {
        absl::MutexLock lock(&mu_);
        if (stop_) return;
        if (heap_.empty() || heap_.top().due > NowNs()) {
          const int64_t wait = heap_.empty() ? 50'000'000 : heap_.top().due - NowNs();
          cv_.WaitWithTimeout(&mu_, absl::Nanoseconds(wait));
          continue;
        }
        fn = std::move(const_cast<Item&>(heap_.top()).fn);
        heap_.pop();
      }
      fn();
    }
  }
  absl::Mutex mu_;
  absl::CondVar cv_;
  bool stop_ = false;
  uint64_t seq_ = 0;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap_;
  std::thread thread_;
};

struct Config {
  std::string address = "127.0.0.1:0";
  int64_t latency_ns = 200'000;
  int64_t pause_at_ns = -1;
  int64_t pause_for_ns = 1'000'000'000;
  int64_t error_every = 0;
  bool serial = false;
  std::vector<std::string> models = {"fake"};
};

class FakeService final : public inference::GRPCInferenceService::CallbackService {
 public:
  explicit FakeService(Config c) : c_(std::move(c)) {}

  // When a request arriving now is answered.
  int64_t Due(int64_t now) {
    int64_t first = first_ns_.load();
    if (first == 0 && first_ns_.compare_exchange_strong(first, now)) first = now;
    int64_t due = now + c_.latency_ns;
    if (c_.serial) {
      absl::MutexLock lock(&serial_mu_);
      due = std::max(now, last_due_) + c_.latency_ns;
      last_due_ = due;
    }
    if (c_.pause_at_ns >= 0) {
      const int64_t start = first + c_.pause_at_ns, end = start + c_.pause_for_ns;
      if (due >= start && now < end) due = std::max(due, end);
    }
    return due;
  }
  bool Serves(const std::string& model) const {
    return std::find(c_.models.begin(), c_.models.end(), model) != c_.models.end();
  }
  // Whether this inference request is one of the planned failures.
  bool PlannedFailure() { return c_.error_every > 0 && ++count_ % c_.error_every == 0; }

  void Fill(const inference::ModelInferRequest& req, inference::ModelInferResponse* resp) {
    resp->set_model_name(req.model_name());
    resp->set_id(req.id());
    auto* out = resp->add_outputs();
    out->set_name("output");
    out->set_datatype("FP32");
    if (req.inputs_size() > 0) *out->mutable_shape() = req.inputs(0).shape();
    resp->add_raw_output_contents(req.raw_input_contents_size() > 0 ? req.raw_input_contents(0) : "");
  }
  void Count(int64_t ns) {
    absl::MutexLock lock(&stats_mu_);
    ++success_;
    success_ns_ += ns;
  }

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* ctx, const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* resp) override {
    resp->set_live(true);
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    return r;
  }
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* ctx, const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* resp) override {
    resp->set_name("onyx_load_fake_server");
    resp->set_version("1");
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    return r;
  }
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* ctx, const inference::ModelMetadataRequest* req,
                                          inference::ModelMetadataResponse* resp) override {
    auto* r = ctx->DefaultReactor();
    if (!Serves(req->name())) {
      r->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown model '" + req->name() + "'"));
      return r;
    }
    resp->set_name(req->name());
    *resp->add_versions() = std::string("1");  // add_versions(const char*) trips a GCC 12 -Wrestrict false positive
    resp->set_platform("fake");
    for (const char* name : {"input", "output"}) {
      auto* t = std::string(name) == "input" ? resp->add_inputs() : resp->add_outputs();
      t->set_name(name);
      t->set_datatype("FP32");
      t->add_shape(-1);
      t->add_shape(4);
    }
    r->Finish(grpc::Status::OK);
    return r;
  }
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* ctx,
                                            const inference::ModelStatisticsRequest* req,
                                            inference::ModelStatisticsResponse* resp) override {
    auto* s = resp->add_model_stats();
    s->set_name(req->name().empty() ? c_.models[0] : req->name());
    s->set_version("1");
    absl::MutexLock lock(&stats_mu_);
    s->mutable_inference_stats()->mutable_success()->set_count(success_);
    s->mutable_inference_stats()->mutable_success()->set_ns(success_ns_);
    s->mutable_inference_stats()->mutable_compute_infer()->set_ns(success_ns_);
    s->set_inference_count(success_);
    s->set_execution_count(success_);
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    return r;
  }
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* ctx, const inference::ModelInferRequest* req,
                                       inference::ModelInferResponse* resp) override {
    const int64_t now = NowNs();
    auto* r = ctx->DefaultReactor();
    grpc::Status status = grpc::Status::OK;
    if (!Serves(req->model_name())) {
      status = grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown model '" + req->model_name() + "'");
    } else if (PlannedFailure()) {
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "fake: planned failure");
    } else {
      Fill(*req, resp);
    }
    const int64_t due = Due(now);
    if (due <= NowNs()) {
      if (status.ok()) Count(NowNs() - now);
      r->Finish(status);
    } else {
      replier_.At(due, [this, r, status, now] {
        if (status.ok()) Count(NowNs() - now);
        r->Finish(status);
      });
    }
    return r;
  }
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>* ModelStreamInfer(
      grpc::CallbackServerContext*) override {
    return new Stream(this);
  }

 private:
  class Stream : public grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse> {
   public:
    explicit Stream(FakeService* s) : s_(s) { StartRead(&request_); }
    void OnReadDone(bool ok) override {
      if (!ok) {
        absl::MutexLock lock(&mu_);
        reads_done_ = true;
        MaybeFinish();
        return;
      }
      const int64_t now = NowNs();
      auto reply = std::make_shared<inference::ModelStreamInferResponse>();
      if (s_->PlannedFailure()) {
        reply->set_error_message("fake: planned failure");
        reply->mutable_infer_response()->set_id(request_.id());
      } else {
        s_->Fill(request_, reply->mutable_infer_response());
      }
      const int64_t due = s_->Due(now);
      if (reply->error_message().empty()) s_->Count(due - now);
      {
        absl::MutexLock lock(&mu_);
        ++pending_;
      }
      s_->replier_.At(due, [this, reply] { Queue(reply); });
      StartRead(&request_);
    }
    void OnWriteDone(bool ok) override {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!queue_.empty()) WriteNext();
      MaybeFinish();
    }
    void OnDone() override { delete this; }

   private:
    void Queue(std::shared_ptr<inference::ModelStreamInferResponse> reply) {
      absl::MutexLock lock(&mu_);
      --pending_;
      queue_.push_back(std::move(reply));
      if (!writing_) WriteNext();
    }
    void WriteNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      current_ = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
      StartWrite(current_.get());
    }
    void MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (reads_done_ && pending_ == 0 && queue_.empty() && !writing_ && !finished_) {
        finished_ = true;
        Finish(grpc::Status::OK);
      }
    }
    FakeService* s_;
    inference::ModelInferRequest request_;
    absl::Mutex mu_;
    bool reads_done_ = false, writing_ = false, finished_ = false;
    int64_t pending_ = 0;
    std::deque<std::shared_ptr<inference::ModelStreamInferResponse>> queue_;
    std::shared_ptr<inference::ModelStreamInferResponse> current_;
  };

  const Config c_;
  Replier replier_;
  std::atomic<int64_t> first_ns_{0};
  std::atomic<int64_t> count_{0};
  absl::Mutex serial_mu_;
  int64_t last_due_ = 0;
  absl::Mutex stats_mu_;
  uint64_t success_ = 0, success_ns_ = 0;
};

std::atomic<bool> g_stop{false};

}  // namespace
}  // namespace onyx::load

int main(int argc, char** argv) {
  using namespace onyx::load;
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    absl::StatusOr<double> seconds = ParseSeconds(flag, value);
    if (flag == "--address") {
      c.address = value;
    } else if (flag == "--model") {
      c.models = absl::StrSplit(value, ',');
    } else if (flag == "--serial") {
      c.serial = value == "1" || value == "true";
    } else if (flag == "--error-every") {
      absl::StatusOr<int64_t> n = ParseInt(flag, value, 0, 1 << 30);
      if (!n.ok()) return std::fprintf(stderr, "%s\n", std::string(n.status().message()).c_str()), 2;
      c.error_every = *n;
    } else if (flag == "--latency" || flag == "--pause-at" || flag == "--pause-for") {
      if (!seconds.ok()) return std::fprintf(stderr, "%s\n", std::string(seconds.status().message()).c_str()), 2;
      const int64_t ns = static_cast<int64_t>(*seconds * 1e9);
      (flag == "--latency" ? c.latency_ns : flag == "--pause-at" ? c.pause_at_ns : c.pause_for_ns) = ns;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  FakeService service(c);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(c.address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(-1);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "cannot listen on %s\n", c.address.c_str());
    return 1;
  }
  const std::string host = c.address.substr(0, c.address.rfind(':'));
  std::printf("listening on %s:%d\n", host.c_str(), port);
  std::fflush(stdout);
  signal(SIGTERM, [](int) { g_stop = true; });
  signal(SIGINT, [](int) { g_stop = true; });
  while (!g_stop) SleepUntilNs(NowNs() + 50'000'000);
  // Replies may be scheduled far ahead (a long --pause-for); a test fixture
  // need not wait for them.
  std::fflush(stdout);
  _exit(0);
}
