#include "loadtest/runner.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "loadtest/clock.h"
#include "loadtest/level_result.h"
#include "loadtest/status_macros.h"
#include "loadtest/units.h"
#include "loadtest/verdict.h"

#ifndef ONYX_VERSION
#define ONYX_VERSION "dev"
#endif

namespace onyx::load {

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int64_t ProcessRssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

absl::StatusOr<std::unique_ptr<Runner>> Runner::Create(const Options& options) {
  std::unique_ptr<Runner> runner(new Runner(options));
  RETURN_IF_ERROR(runner->Setup());
  return runner;
}

Runner::~Runner() {
  for (auto& w : workers_) w->Stop();
  // Unregister the shared-memory regions (their files go with ModelWork).
  for (const ModelWork& m : models_) {
    if (!m.shm) continue;
    for (int channel : registered_channels_) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      inference::SystemSharedMemoryUnregisterRequest request;
      request.set_name(m.shm_name);
      inference::SystemSharedMemoryUnregisterResponse response;
      pool_->typed(channel)->SystemSharedMemoryUnregister(&context, request, &response);
    }
  }
}

absl::Status Runner::Setup() {
  ASSIGN_OR_RETURN(pool_, ChannelPool::Create(options_.targets, options_.connections, options_.connect_timeout_s));
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    inference::ServerMetadataResponse md;
    grpc::Status s = pool_->typed(0)->ServerMetadata(&context, inference::ServerMetadataRequest(), &md);
    if (s.ok()) {
      result_.server["name"] = md.name();
      result_.server["version"] = md.version();
      result_.server["extensions"] = absl::StrJoin(md.extensions(), ",");
    } else {
      result_.notes.push_back(absl::StrCat("ServerMetadata on ", pool_->target(0), ": ", s.error_message()));
    }
    result_.server["target"] = absl::StrJoin(options_.targets, ",");
  }
  if (options_.empty_call) {
    models_.push_back(EmptyCallWork());
  }
  for (size_t i = 0; i < options_.models.size(); ++i) {
    const ModelSpec& spec = options_.models[i];
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    inference::ModelMetadataRequest request;
    request.set_name(spec.name);
    request.set_version(spec.version);
    inference::ModelMetadataResponse md;
    grpc::Status s = pool_->typed(0)->ModelMetadata(&context, request, &md);
    if (!s.ok()) {
      const std::string why =
          absl::StrCat("ModelMetadata('", spec.name, "') on ", pool_->target(0), ": ", s.error_message());
      return s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                 ? absl::UnavailableError(why)
                 : absl::InvalidArgumentError(why);
    }
    ASSIGN_OR_RETURN(ModelWork work, BuildModelWork(md, spec, options_, static_cast<int>(i)));
    models_.push_back(std::move(work));
  }
  for (const ModelWork& m : models_) model_names_.push_back(m.spec.name);
  // Shared memory is registered with every replica.
  for (const ModelWork& m : models_) {
    if (!m.shm) continue;
    registered_channels_ = pool_->OnePerTarget();
    for (int channel : registered_channels_) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      inference::SystemSharedMemoryRegisterRequest request;
      request.set_name(m.shm_name);
      request.set_key(m.shm->key());
      request.set_offset(0);
      request.set_byte_size(m.shm->size());
      inference::SystemSharedMemoryRegisterResponse response;
      grpc::Status s = pool_->typed(channel)->SystemSharedMemoryRegister(&context, request, &response);
      if (!s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--shm system: SystemSharedMemoryRegister('", m.shm_name,
                                                       "') on ", pool_->target(channel), ": ", s.error_message()));
      }
    }
  }
  run_t0_ns_ = NowNs();
  if (!options_.trace_path.empty()) {
    ASSIGN_OR_RETURN(trace_, TraceWriter::Open(options_.trace_path, model_names_, run_t0_ns_));
  }
  if (options_.max_inflight > 0) gate_ = std::make_unique<Gate>(options_.max_inflight, options_.drop_overflow);

  std::vector<double> cumulative;
  double total = 0;
  for (const ModelSpec& m : options_.models) total += m.weight;
  double sum = 0;
  for (const ModelSpec& m : options_.models) cumulative.push_back((sum += m.weight) / total);
  collector_ = std::make_unique<Collector>(static_cast<int>(models_.size()));
  for (int i = 0; i < options_.threads; ++i) {
    WorkerConfig c;
    c.index = i;
    c.count = options_.threads;
    c.models = &models_;
    c.cumulative_weights = cumulative;
    c.channels = pool_.get();
    // Channels are dealt out to workers; with fewer channels than workers they are shared.
    for (int ch = i % pool_->size(); ch < pool_->size(); ch += options_.threads) c.channel_ids.push_back(ch);
    c.gate = gate_.get();
    c.poisson = options_.poisson;
    c.streaming = options_.streaming;
    c.validate = options_.validate;
    c.timeout_s = options_.timeout_s;
    c.seed = options_.seed;
    c.trace = trace_.get();
    workers_.push_back(std::make_unique<Worker>(std::move(c)));
    collector_->Register(workers_.back()->pacer_stats());
    collector_->Register(workers_.back()->reaper_stats());
    workers_.back()->Start();
  }
  ServerWatchConfig wc;
  wc.metrics_urls = options_.metrics_urls;
  wc.interval_s = options_.scrape_interval_s;
  if (!options_.empty_call) wc.models = model_names_;
  wc.channels = options_.empty_call ? nullptr : pool_.get();
  wc.model_stats = options_.server_stats;
  watch_ = std::make_unique<ServerWatch>(std::move(wc));
  return absl::OkStatus();
}

RunResult Runner::Run() {
  result_.percentiles = options_.percentiles;
  result_.config = options_.given;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  utsname u{};
  uname(&u);
  result_.host["hostname"] = host;
  result_.host["cores"] = absl::StrCat(std::thread::hardware_concurrency());
  result_.host["kernel"] = absl::StrCat(u.sysname, " ", u.release, " ", u.machine);
  result_.host["onyx_load_version"] = ONYX_VERSION;
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  result_.started_at = stamp;

  const int64_t start = NowNs();
  last_tick_ns_ = start;
  last_tick_cpu_s_ = ProcessCpuSeconds();
  watch_->Start(run_t0_ns_);
  if (options_.find_max) {
    FindMax();
  } else {
    absl::StatusOr<std::vector<Phase>> phases = PlanPhases(options_);
    for (const Phase& phase : *phases) RunPhase(phase);
  }
  watch_->Stop();
  result_.server_series = watch_->series();
  for (const std::string& p : watch_->problems()) result_.notes.push_back(p);
  result_.wall_s = (NowNs() - start) / 1e9;
  DecideVerdict(options_.asserts, &result_);
  return std::move(result_);
}

void Runner::RunPhase(const Phase& phase) {
  PhaseContext ctx;
  ctx.phase = &phase;
  ctx.first_level = static_cast<int>(result_.levels.size());
  ctx.t0_ns = NowNs() + 20'000'000;  // time for the pacers to start
  for (const LevelSpan& l : phase.levels) {
    ctx.level_start_ns.push_back(ctx.t0_ns + static_cast<int64_t>(l.start_s * 1e9));
    ctx.level_end_ns.push_back(std::isfinite(l.end_s) ? ctx.t0_ns + static_cast<int64_t>(l.end_s * 1e9) : INT64_MAX);
  }
  if (!phase.open_loop) ctx.request_budget = options_.requests;
  ctx.sending = true;

  struct Track {
    bool started = false, ended = false;
    int64_t start_ns = 0, end_ns = 0;
    double cpu_start = 0, cpu_end = 0;
    ServerSnapshot before, after;
  };
  std::vector<Track> tracks(phase.levels.size());
  const auto begin_level = [&](size_t i, int64_t now) {
    tracks[i].started = true;
    tracks[i].start_ns = now;
    tracks[i].cpu_start = ProcessCpuSeconds();
    tracks[i].before = watch_->Take();
  };
  const auto end_level = [&](size_t i, int64_t now) {
    tracks[i].ended = true;
    tracks[i].end_ns = now;
    tracks[i].cpu_end = ProcessCpuSeconds();
    tracks[i].after = watch_->Take();
  };

  std::atomic<int> pacers{static_cast<int>(workers_.size())};
  std::vector<std::thread> threads;
  for (auto& w : workers_) {
    threads.emplace_back([&, worker = w.get()] {
      worker->RunPhase(&ctx);
      pacers.fetch_sub(1);
    });
  }
  const double end_s = phase.end_s();
  const int64_t phase_end = std::isfinite(end_s) ? ctx.t0_ns + static_cast<int64_t>(end_s * 1e9) : INT64_MAX;
  const int64_t give_up =
      phase_end == INT64_MAX ? INT64_MAX : phase_end + static_cast<int64_t>(options_.drain_timeout_s * 1e9);
  bool cancelled = false;
  int64_t next_tick = ctx.t0_ns + 1'000'000'000;
  int64_t budget_end_ns = 0;  // when a closed loop's --requests were all sent
  for (;;) {
    const int64_t now = NowNs();
    const bool budget_done = ctx.request_budget > 0 && !ctx.sending.load();
    if (budget_done && budget_end_ns == 0) budget_end_ns = now;
    for (size_t i = 0; i < phase.levels.size(); ++i) {
      if (!tracks[i].started && now >= ctx.level_start_ns[i]) begin_level(i, now);
      // The last level ends after the drain, so that its late replies count on the server side too.
      const bool last = i + 1 == phase.levels.size();
      if (tracks[i].started && !tracks[i].ended && !last && now >= ctx.level_end_ns[i]) end_level(i, now);
    }
    if (now >= next_tick) {
      Tick(ctx, now, false);
      next_tick += 1'000'000'000;
    }
    if (!phase.open_loop && now >= phase_end) ctx.sending = false;
    const bool schedule_done = (now >= phase_end || budget_done) && pacers.load() == 0;
    if (schedule_done && ctx.outstanding.load() == 0) break;
    if (now > give_up && !cancelled) {
      // Cancelled calls complete (CANCELLED) and the phase drains as usual.
      result_.notes.push_back(absl::StrCat(ctx.outstanding.load(), " requests were still outstanding ",
                                           options_.drain_timeout_s, "s after the schedule ended: cancelled"));
      for (auto& w : workers_) w->CancelOutstanding();
      cancelled = true;
    }
    if (cancelled && now > give_up + 10'000'000'000) {
      result_.notes.push_back(absl::StrCat(ctx.outstanding.load(), " requests never completed, even cancelled"));
      break;
    }
    int64_t wake = std::min(next_tick, now + 5'000'000);
    for (size_t i = 0; i < phase.levels.size(); ++i) {
      if (!tracks[i].started) wake = std::min(wake, ctx.level_start_ns[i]);
      if (!tracks[i].ended && ctx.level_end_ns[i] > now) wake = std::min(wake, ctx.level_end_ns[i]);
    }
    SleepUntilNs(wake);
  }
  ctx.sending = false;
  for (std::thread& t : threads) t.join();
  const int64_t done = NowNs();
  for (size_t i = 0; i < phase.levels.size(); ++i) {
    if (!tracks[i].started) begin_level(i, done);
    if (!tracks[i].ended) end_level(i, done);
  }
  // What completed since the last tick becomes a last, shorter window.
  Tick(ctx, done, true);

  for (size_t i = 0; i < phase.levels.size(); ++i) {
    const LevelSpan& span = phase.levels[i];
    const int index = ctx.first_level + static_cast<int>(i);
    LevelInputs in;
    in.index = index;
    in.label = span.label;
    in.open_loop = phase.open_loop;
    in.target_rate = span.rate_from;
    in.target_rate_end = span.rate_to;
    in.concurrency = phase.concurrency;
    in.start_s = (ctx.level_start_ns[i] - run_t0_ns_) / 1e9;
    // Scheduled span; a closed loop measured by --requests ran until its budget was sent.
    const bool by_budget = ctx.level_end_ns[i] == INT64_MAX;
    const int64_t end_ns = by_budget ? (budget_end_ns ? budget_end_ns : tracks[i].end_ns) : ctx.level_end_ns[i];
    in.measured_s = std::max(1e-9, (end_ns - ctx.level_start_ns[i]) / 1e9);
    in.cpu_s = tracks[i].cpu_end - tracks[i].cpu_start;
    in.model_names = model_names_;
    in.max_late_share = options_.max_late_share;
    in.windows = &result_.windows;
    LevelResult level = SummarizeLevel(in, collector_->TakeLevel(index));
    const std::vector<ServerPoint> series = watch_->series();
    for (ModelLevelResult& m : level.models) {
      m.server = ServerWatch::Delta(tracks[i].before, tracks[i].after, m.model, series, in.start_s,
                                    (tracks[i].end_ns - run_t0_ns_) / 1e9);
    }
    result_.levels.push_back(std::move(level));
  }
}

void Runner::Tick(const PhaseContext& ctx, int64_t now, bool last) {
  collector_->Drain();
  WindowTotals& w = collector_->window();
  // The phase's last, partial window is kept only when something happened in it.
  if (last && w.dispatched == 0 && w.ok == 0 && w.failed == 0) return;
  WindowPoint p;
  p.t_s = (now - run_t0_ns_) / 1e9;
  const int64_t middle = now - std::min<int64_t>(500'000'000, (now - last_tick_ns_) / 2);
  p.level = ctx.LevelOf(middle);
  if (ctx.phase->open_loop) p.target_rate = ctx.phase->profile.RateAt((middle - ctx.t0_ns) / 1e9);
  p.sent = w.dispatched - w.dropped;
  p.ok = w.ok;
  p.failed = w.failed;
  p.dropped = w.dropped;
  p.p50 = w.response.Percentile(0.5);
  p.p99 = w.response.Percentile(0.99);
  p.max = w.response.max();
  p.service_p99 = w.service.Percentile(0.99);
  for (const auto& worker : workers_) p.inflight += worker->inflight();
  p.queued = gate_ ? gate_->queued() : 0;
  const double cpu = ProcessCpuSeconds();
  // Over a few milliseconds the CPU clock's granularity would dominate.
  p.cpu_share = now - last_tick_ns_ > 50'000'000 ? (cpu - last_tick_cpu_s_) / ((now - last_tick_ns_) / 1e9) : 0;
  last_tick_cpu_s_ = cpu;
  last_tick_ns_ = now;
  p.rss_bytes = ProcessRssBytes();
  result_.windows.push_back(p);
  if (!options_.quiet) PrintProgress(p, ctx, middle);
}

void Runner::PrintProgress(const WindowPoint& w, const PhaseContext& ctx, int64_t middle_ns) {
  std::string level = middle_ns < ctx.level_start_ns.front() ? "warm-up" : "draining";
  if (w.level >= 0) level = ctx.phase->levels[w.level - ctx.first_level].label;
  std::fprintf(stderr,
               "[%6.1fs] %-22s sent %7s ok %7s err %5lld inflight %5lld  p50 %8s  p99 %8s  max %8s  cpu %.0f%%\n",
               w.t_s, level.c_str(), FormatCount(w.sent).c_str(), FormatCount(w.ok).c_str(),
               static_cast<long long>(w.failed + w.dropped), static_cast<long long>(w.inflight + w.queued),
               FormatNs(w.p50).c_str(), FormatNs(w.p99).c_str(), FormatNs(w.max).c_str(), w.cpu_share * 100);
}

}  // namespace onyx::load
