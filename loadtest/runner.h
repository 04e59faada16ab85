// Runner: one onyx-load run from set-up to verdict.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner, Runner::Create(options));
//   RunResult result = runner->Run();      // result.exit_code is the process's
//
// Create connects (--connections channels), reads ServerMetadata and each
// model's ModelMetadata, builds and serialises the requests, opens --trace
// and registers --shm regions. Run drives the phases (or the --find-max
// search), a window every second with the progress line, the server watch,
// and finally the verdict.
//
// Errors from Create: UNAVAILABLE when the target cannot be reached or the
// model is not available (exit 5); anything else is a problem with the
// flags or inputs (exit 2). Thread-compatible: Run once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loadtest/channels.h"
#include "loadtest/collector.h"
#include "loadtest/gate.h"
#include "loadtest/options.h"
#include "loadtest/plan.h"
#include "loadtest/request_builder.h"
#include "loadtest/result.h"
#include "loadtest/server_watch.h"
#include "loadtest/trace.h"
#include "loadtest/worker.h"

namespace onyx::load {

class Runner {
 public:
  static absl::StatusOr<std::unique_ptr<Runner>> Create(const Options& options);
  ~Runner();

  RunResult Run();

 private:
  explicit Runner(const Options& options) : options_(options) {}
  absl::Status Setup();
  // Runs one phase to the end (drained), appending its levels and windows.
  void RunPhase(const Phase& phase);
  // Closes the window ending at `now`: drains every thread, records it, prints the progress line.
  void Tick(const PhaseContext& ctx, int64_t now, bool last);
  void FindMax();
  void PrintProgress(const WindowPoint& w, const PhaseContext& ctx, int64_t middle_ns);

  const Options options_;
  std::unique_ptr<ChannelPool> pool_;
  std::vector<ModelWork> models_;
  std::vector<std::string> model_names_;
  std::unique_ptr<Gate> gate_;
  std::unique_ptr<TraceWriter> trace_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<Collector> collector_;
  std::unique_ptr<ServerWatch> watch_;
  RunResult result_;
  int64_t run_t0_ns_ = 0;
  int64_t last_tick_ns_ = 0;
  double last_tick_cpu_s_ = 0;
  std::vector<int> registered_channels_;  // where --shm regions were registered
};

// CPU seconds this process has used (user + system).
double ProcessCpuSeconds();
// Resident memory of this process in bytes.
int64_t ProcessRssBytes();

}  // namespace onyx::load
