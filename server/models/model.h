// Model: one loaded version of a model — its configuration, signature, bucket
// sessions and scheduler.
//
//   Model::Options options;
//   options.name = "mlp";
//   options.version = 3;
//   options.model_path = "/models/mlp/3/model.onnx";
//   options.config_file = parsed_config_yaml;     // ModelConfigFile
//   options.config_source = "/models/mlp/config.yaml";
//   ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(options));
//   RETURN_IF_ERROR(model->scheduler().Enqueue(std::move(request), std::move(done)));
//
// Load() does all the work once: probes the graph for its inputs and outputs,
// resolves the configuration against them (padded_dims must name dim_params of
// the inputs), builds and warms one session per bucket (× padded size) with
// the configured session options and warm-up (a warmup.inputs directory is
// relative to the model directory, the parent of the version directory) and
// starts the scheduler's workers (a DynamicBatcher configured from
// max_batch_size, dynamic_batching and instance_count).
// Thread-safe: immutable after Load(); the scheduler is thread-safe. Call Stop()
// before dropping the last reference while requests may be in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "onyx/session.h"
#include "server/config/model_config.h"
#include "server/models/bucket_sessions.h"
#include "server/models/model_stats.h"
#include "server/models/tensor_spec.h"
#include "server/scheduling/byte_budget.h"
#include "server/scheduling/scheduler.h"

namespace onyx::server {

class Model {
 public:
  struct Options {
    std::string name;
    int64_t version = 1;
    // The graph file.
    std::string model_path;
    // The model's configuration as parsed (config.yaml or a load override),
    // and what names it in error messages.
    ModelConfigFile config_file;
    std::string config_source;
    // Base options for every session of the model (providers, threads).
    onyx::SessionOptions session_options;
    // Optional: told about every engine run of the model's dynamic batcher
    // (requests merged, their rows); see DynamicBatcher::Options::on_batch.
    std::function<void(int64_t requests, int64_t rows)> on_batch;
    // Optional: each request's queue wait and engine run time; see
    // DynamicBatcher::Options::on_timing.
    std::function<void(absl::Duration queued, absl::Duration compute)> on_timing;
  };

  // Errors name the model and what failed: INVALID_ARGUMENT for a bad
  // configuration (also padded_dims naming an unknown dim or input) or a
  // signature onyx cannot serve (sequence inputs, complex types, unknown input
  // rank), and the engine's errors for the graph itself.
  static absl::StatusOr<std::unique_ptr<Model>> Load(const Options& options);

  // Stops the scheduler (drains accepted requests).
  ~Model();

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  const std::string& version_string() const { return version_string_; }
  const ModelConfig& config() const { return config_; }
  // Graph inputs and outputs in graph order; batched models have -1 first.
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  bool batched() const { return config_.max_batch_size > 0; }

  Scheduler& scheduler() const { return *scheduler_; }
  // The engine sessions behind the scheduler, one per bucket.
  const BucketSessions& sessions() const { return *sessions_; }
  // Wall time Load() took (probe, bucket sessions, warm-up, scheduler start).
  absl::Duration load_duration() const { return load_duration_; }
  // Statistics of this version (thread-safe; counted by the RPC layer).
  ModelStats& stats() const { return *stats_; }
  // Request bytes of this version admitted and not yet answered, capped by
  // dynamic_batching.max_inflight_bytes (leases taken by the RPC layer).
  ByteBudget& inflight_bytes() const { return *inflight_bytes_; }
  // Refuses new requests and waits for accepted ones. Idempotent.
  void Stop() const { scheduler_->Stop(); }

 private:
  Model() = default;
  // Fills every member; Load() adds the model's name to errors.
  absl::Status Init(const Options& options);

  std::string name_;
  int64_t version_ = 0;
  std::string version_string_;
  ModelConfig config_;
  std::vector<TensorSpec> inputs_;
  std::vector<TensorSpec> outputs_;
  std::shared_ptr<const BucketSessions> sessions_;
  std::unique_ptr<Scheduler> scheduler_;
  absl::Duration load_duration_;
  const std::unique_ptr<ModelStats> stats_ = std::make_unique<ModelStats>();
  std::unique_ptr<ByteBudget> inflight_bytes_;
};

}  // namespace onyx::server
