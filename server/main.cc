// onyxd: the onyx model server.
//
// Startup: flags and config (TLS files read here) → logging → metrics listener →
// model repository → gRPC server (live at once, TLS when configured) → load
// models → ready.
// SIGTERM/SIGINT: readiness and grpc.health turn NOT_SERVING at once, while
// inference is still served for shutdown.linger_seconds so that load balancers
// stop routing here (a second signal ends the linger early); then new inference
// calls get UNAVAILABLE, accepted and queued ones get up to
// shutdown.drain_timeout_seconds to finish, the gRPC server shuts down, every
// model drains its queue, exit 0.
// SIGUSR1: the engine's arena accounting (DumpArenaLogs) is written to the log.
// These signals are blocked in every thread from the first line of main() and
// taken by sigwait on the main thread, so no code runs in signal context.
// Exit 2 for bad flags or configuration, 1 when the server cannot start.
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "onyx/huge_page_malloc.h"
#include "onyx/memory.h"
#include "server/auth/authorizer.h"
#include "server/config/command_line.h"
#include "server/grpc/admin_service.h"
#include "server/grpc/auth_credentials.h"
#include "server/grpc/inference_service.h"
#include "server/grpc/transport_limits.h"
#include "server/memory/malloc_arenas.h"
#include "server/models/model_repository.h"
#include "server/models/override_files.h"
#include "server/observability/health_service.h"
#include "server/observability/logging.h"
#include "server/observability/metrics.h"
#include "server/observability/model_collector.h"
#include "server/observability/serving_state.h"
#include "spdlog/spdlog.h"

#ifndef ONYX_VERSION
#define ONYX_VERSION "0.0.0"
#endif

namespace onyx::server {
namespace {

// What gRPC's Shutdown gets once our calls are done: it would otherwise wait for
// idle client connections to close, which clients may never do.
constexpr auto kShutdownGrace = std::chrono::seconds(1);

// The demo repository the build writes next to the executable.
std::string DemoRepository() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "demo_models";
  return (exe.parent_path() / "demo_models").string();
}

// "127.0.0.1:0" listening on 40123 → "127.0.0.1:40123".
std::string WithPort(const std::string& address, int port) {
  return absl::StrCat(address.substr(0, address.rfind(':')), ":", port);
}

// Blocks SIGTERM, SIGINT and SIGUSR1 in this thread and every thread it
// creates, so that WaitForShutdownSignal() is the only place they arrive.
sigset_t BlockServerSignals() {
  // A parent may have left them ignored (shells do for background jobs), and an
  // ignored signal is discarded even while blocked, so sigwait would never see it.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) {
    signal(s, SIG_DFL);
    sigaddset(&signals, s);
  }
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Waits for SIGTERM or SIGINT until `deadline` and returns it, or 0 once the
// deadline passes. SIGUSR1 meanwhile writes the arena accounting to the log.
int WaitForShutdownSignal(const sigset_t& signals, absl::Time deadline) {
  for (;;) {
    int signal_number = 0;
    if (deadline == absl::InfiniteFuture()) {
      if (sigwait(&signals, &signal_number) != 0) continue;
    } else {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return 0;
      const timespec timeout = absl::ToTimespec(left);
      signal_number = sigtimedwait(&signals, nullptr, &timeout);
      if (signal_number < 0) {
        if (errno == EAGAIN) return 0;
        continue;  // EINTR
      }
    }
    if (signal_number != SIGUSR1) return signal_number;
    spdlog::info("arena accounting (SIGUSR1):\n{}", onyx::DumpArenaLogs());
  }
}

const char* SignalName(int signal_number) {
  return signal_number == SIGTERM ? "SIGTERM" : "SIGINT";
}

// How the log describes the token policy; never a token.
std::string AuthSummary(const ServerConfig& config, const Authorizer* authorizer) {
  if (authorizer == nullptr) return "tokens off";
  return absl::StrCat(
      config.auth.inference_token_file.empty() ? "inference open" : "inference tokens",
      authorizer->control_rpcs_enabled()
          ? (config.auth.control_token_file.empty() ? ", control open" : ", control tokens")
          : ", control RPCs disabled");
}

// `tls` is null when the gRPC port is plaintext; `authorizer` when tokens are off.
int Run(const ServerConfig& config, const sigset_t& signals, const TlsMaterial* tls,
        const Authorizer* authorizer) {
  const std::string root =
      config.model_repository.empty() ? DemoRepository() : config.model_repository;

  // Metrics first: the repository's models report batches to it, and locals
  // are destroyed in reverse, so the models stop before the metrics go.
  Metrics::Options metrics_options;
  metrics_options.address = config.metrics_address;
  metrics_options.version = ONYX_VERSION;
  auto metrics = Metrics::Create(metrics_options);
  if (!metrics.ok()) {
    spdlog::critical("{}", metrics.status().ToString());
    return 1;
  }
  // Before the repository: requests release their leases as models drain.
  ByteBudget inflight_bytes("server max_inflight_bytes", config.max_inflight_bytes);
  ModelRepository::Options repository_options;
  repository_options.root = root;
  repository_options.on_batch =
      [m = metrics->get()](const std::string& model, const std::string& version, int64_t requests,
                           int64_t rows) { m->RecordBatch(model, version, requests, rows); };
  repository_options.on_timing =
      [m = metrics->get()](const std::string& model, const std::string& version,
                           absl::Duration queued, absl::Duration compute) {
    m->RecordTiming(model, version, absl::ToDoubleSeconds(queued), absl::ToDoubleSeconds(compute));
  };
  // Dropped once the version's Model is gone: its series leave /metrics.
  repository_options.version_lifetime =
      [m = metrics->get()](const std::string& model, const std::string& version) {
    return m->HoldVersionSeries(model, version);
  };
  // A killed onyxd leaves the files of its RepositoryModelLoad calls behind.
  if (const int stale = RemoveStaleOverrideDirectories(); stale > 0) {
    spdlog::info("removed {} model-file director{} left in the temp dir by an onyxd that is gone",
                 stale, stale == 1 ? "y" : "ies");
  }
  auto repository = ModelRepository::Create(repository_options);
  if (!repository.ok()) {
    spdlog::critical("{}", repository.status().ToString());
    return 1;
  }

  ServingState serving;
  InferenceService::Options service_options;
  service_options.repository = repository->get();
  service_options.metrics = metrics->get();
  service_options.serving = &serving;
  service_options.version = ONYX_VERSION;
  service_options.limits.max_elements_per_input = config.max_elements_per_input;
  service_options.limits.max_message_bytes = config.max_message_bytes;
  service_options.inflight_bytes = &inflight_bytes;
  service_options.max_stream_buffer_bytes = config.max_stream_buffer_bytes;
  const RequestLogSampler request_log(config.request_log_sample_rate);
  if (request_log.rate() > 0) service_options.request_log = &request_log;
  auto service = InferenceService::Create(service_options);
  if (!service.ok()) {
    spdlog::critical("{}", service.status().ToString());
    return 1;
  }
  ModelRepository* repo = repository->get();
  HealthService health(&serving, [repo](absl::string_view name) { return repo->GetStatus(name); });
  // Declared after the repository, so scrapes stop reading it before it goes.
  const std::unique_ptr<CollectableRegistration> model_metrics =
      (*metrics)->AddCollectable(std::make_shared<ModelCollector>(repo));
  AdminService::Options admin_options;
  admin_options.repository = repo;
  admin_options.profile_directory =
      (std::filesystem::temp_directory_path() / "onyx-profiles").string();
  auto admin = AdminService::Create(admin_options);
  if (!admin.ok()) {
    spdlog::critical("{}", admin.status().ToString());
    return 1;
  }

  grpc::ServerBuilder builder;
  int port = 0;
  // gRPC sets SO_REUSEPORT by default: a second onyxd on a busy port would
  // start and split the first one's traffic instead of failing to bind.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(config.grpc_address, ServerCredentialsFor(tls, authorizer), &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config.max_message_bytes));
  for (const auto& [name, value] : TransportChannelArguments(config.transport)) {
    builder.AddChannelArgument(name, value);
  }
  builder.RegisterService(service->get());
  builder.RegisterService(&health);
  builder.RegisterService(admin->get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::critical("cannot listen on {} (gRPC)", config.grpc_address);
    return 1;
  }
  spdlog::info("onyxd {} listening on {} (gRPC{}, {})", ONYX_VERSION,
               WithPort(config.grpc_address, port),
               tls == nullptr               ? ""
               : tls->client_ca_pem.empty() ? ", TLS"
                                            : ", mutual TLS",
               AuthSummary(config, authorizer));
  for (int metrics_port : (*metrics)->ListeningPorts()) {
    spdlog::info("metrics on http://{}/metrics", WithPort(config.metrics_address, metrics_port));
  }

  if (config.load_mode == LoadMode::kAll) {
    (*repository)->LoadAll();
  } else {
    (*repository)->DiscoverOnly();
  }
  serving.SetServing(true);
  spdlog::info("ready: model repository {}", root);

  const int signal_number = WaitForShutdownSignal(signals, absl::InfiniteFuture());
  serving.SetServing(false);
  health.Notify();
  const absl::Duration linger = absl::Seconds(config.shutdown.linger_seconds);
  if (linger <= absl::ZeroDuration()) {
    spdlog::info("received {}: not ready; draining", SignalName(signal_number));
  } else {
    spdlog::info("received {}: not ready; serving for {} more, then draining",
                 SignalName(signal_number), absl::FormatDuration(linger));
    const int again = WaitForShutdownSignal(signals, absl::Now() + linger);
    if (again != 0) spdlog::info("received {} again: draining now", SignalName(again));
  }
  // Logged before new calls are refused, so that a refusal always follows it.
  spdlog::info("linger over: refusing new inference calls, draining accepted ones");
  (*service)->StopAccepting();
  const absl::Duration drain_timeout = absl::Seconds(config.shutdown.drain_timeout_seconds);
  if (!(*service)->AwaitIdle(drain_timeout)) {
    spdlog::warn("inference calls still running after {}; cancelling them",
                 absl::FormatDuration(drain_timeout));
  }
  server->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  (*repository)->UnloadAll();
  server->Wait();
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace onyx::server

int main(int argc, char** argv) {
  // First: it may replace the process image, and must before any thread starts.
  // Off unless ONYX_HUGE_PAGE_MALLOC=1: RSS would move in 2 MiB steps.
  onyx::ReexecWithHugePageMalloc(argv, /*by_default=*/false);
#ifdef NDEBUG
  // absl::Mutex records lock-order edges on every acquisition to detect
  // deadlock cycles (enabled by default even in optimised builds): a few
  // percent of onyxd's CPU at high request rates. Debug builds keep it, so
  // tests still catch lock-order inversions.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  // Before anything can start a thread: threads that exist keep their arenas.
  const std::optional<int> malloc_arenas =
      onyx::server::LimitMallocArenas(onyx::server::kDefaultMallocArenas);
  // Before anything can start a thread, so that every thread inherits the mask.
  const sigset_t signals = onyx::server::BlockServerSignals();
  using onyx::server::ParseCommandLine;
  auto flags = ParseCommandLine(absl::MakeConstSpan(argv + 1, argc > 0 ? argc - 1 : 0));
  if (!flags.ok()) {
    std::fprintf(stderr, "onyxd: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(onyx::server::CommandLineUsage().c_str(), stdout);
    return 0;
  }
  auto config = onyx::server::ResolveServerConfig(*flags);
  if (!config.ok()) {
    std::fprintf(stderr, "onyxd: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  std::optional<onyx::server::TlsMaterial> tls;
  if (config->tls.enabled()) {
    auto material = onyx::server::ReadTlsMaterial(config->tls);
    if (!material.ok()) {
      std::fprintf(stderr, "onyxd: %s\n", std::string(material.status().message()).c_str());
      return 2;
    }
    tls = std::move(*material);
  }
  // Token files are read before logging is set up: a bad one exits 2 like a bad flag.
  std::unique_ptr<onyx::server::Authorizer> authorizer;
  if (config->auth.enabled()) {
    onyx::server::Authorizer::Options auth_options;
    auth_options.inference_token_file = config->auth.inference_token_file;
    auth_options.control_token_file = config->auth.control_token_file;
    auth_options.control_rpcs_enabled = config->auth.control_rpcs_enabled;
    auto created = onyx::server::Authorizer::Create(auth_options);
    if (!created.ok()) {
      std::fprintf(stderr, "onyxd: %s\n", std::string(created.status().message()).c_str());
      return 2;
    }
    authorizer = std::move(*created);
  }
  absl::Status logging = onyx::server::ConfigureLogging(
      {config->log_level, config->log_format == onyx::server::LogFormat::kJson});
  if (!logging.ok()) {
    std::fprintf(stderr, "onyxd: %s\n", std::string(logging.message()).c_str());
    return 2;
  }
  if (malloc_arenas.has_value()) {
    spdlog::debug("malloc arenas limited to {} (MALLOC_ARENA_MAX unset)", *malloc_arenas);
  } else {
    spdlog::debug(
        "malloc arenas left to the C library (set in MALLOC_ARENA_MAX or GLIBC_TUNABLES, or not "
        "glibc's "
        "allocator)");
  }
  return onyx::server::Run(*config, signals, tls ? &*tls : nullptr, authorizer.get());
}
