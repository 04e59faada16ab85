// onyxd: the onyx model server.
//
// Startup: flags and config → logging → metrics listener → model repository →
// gRPC server (live at once) → load models → ready. SIGTERM/SIGINT: readiness
// drops (health NOT_SERVING), new inference calls get UNAVAILABLE, accepted ones
// finish (up to kDrainTimeout), the gRPC server shuts down, every model drains
// its queue, exit 0. Exit 2 for bad flags or configuration, 1 when the server
// cannot start. (Lingering while a load balancer notices NOT_SERVING is a later
// option.)
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/config/command_line.h"
#include "server/grpc/inference_service.h"
#include "server/models/model_repository.h"
#include "server/observability/health_service.h"
#include "server/observability/metrics.h"
#include "server/observability/serving_state.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

#ifndef ONYX_VERSION
#define ONYX_VERSION "0.0.0"
#endif

namespace onyx::server {
namespace {

// How long accepted inference calls may take to finish after SIGTERM.
constexpr absl::Duration kDrainTimeout = absl::Seconds(30);
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

void ConfigureLogging(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("onyxd");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));  // validated by the config layer
  spdlog::flush_on(spdlog::level::info);
}

// "127.0.0.1:0" listening on 40123 → "127.0.0.1:40123".
std::string WithPort(const std::string& address, int port) {
  return absl::StrCat(address.substr(0, address.rfind(':')), ":", port);
}

// Blocks the shutdown signals in this thread and every thread it creates, so
// that WaitForShutdownSignal() is the only place they arrive.
sigset_t BlockShutdownSignals() {
  // A parent may have left them ignored (shells do for background jobs), and an
  // ignored signal is discarded even while blocked, so sigwait would never see it.
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int WaitForShutdownSignal(const sigset_t& signals) {
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  return signal_number;
}

int Run(const ServerConfig& config) {
  const sigset_t signals = BlockShutdownSignals();
  const std::string root =
      config.model_repository.empty() ? DemoRepository() : config.model_repository;

  // Metrics first: the repository's models report batches to it, and locals
  // are destroyed in reverse, so the models stop before the metrics go.
  Metrics::Options metrics_options;
  metrics_options.address = config.metrics_address;
  auto metrics = Metrics::Create(metrics_options);
  if (!metrics.ok()) {
    spdlog::critical("{}", metrics.status().ToString());
    return 1;
  }
  ModelRepository::Options repository_options;
  repository_options.root = root;
  repository_options.on_batch = [m = metrics->get()](const std::string& model, int64_t requests,
                                                     int64_t rows) {
    m->RecordBatch(model, requests, rows);
  };
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
  auto service = InferenceService::Create(service_options);
  if (!service.ok()) {
    spdlog::critical("{}", service.status().ToString());
    return 1;
  }
  ModelRepository* repo = repository->get();
  HealthService health(&serving, [repo](absl::string_view name) { return repo->GetStatus(name); });

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.grpc_address, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config.max_message_bytes));
  builder.RegisterService(service->get());
  builder.RegisterService(&health);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::critical("cannot listen on {} (gRPC)", config.grpc_address);
    return 1;
  }
  spdlog::info("onyxd {} listening on {} (gRPC)", ONYX_VERSION,
               WithPort(config.grpc_address, port));
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

  const int signal_number = WaitForShutdownSignal(signals);
  spdlog::info("received {}, draining", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  serving.SetServing(false);
  (*service)->StopAccepting();
  if (!(*service)->AwaitIdle(kDrainTimeout)) {
    spdlog::warn("inference calls still running after {}; cancelling them",
                 absl::FormatDuration(kDrainTimeout));
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
  onyx::server::ConfigureLogging(config->log_level);
  return onyx::server::Run(*config);
}
