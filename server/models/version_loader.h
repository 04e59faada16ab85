// LoadModelVersion: builds one version of a model (Model::Load) for the
// repository and logs the outcome.
//
//   Model::Options options;            // name, version, model_path, config, ...
//   ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModelVersion(options));
//
// Model::Load runs on a thread of its own (on the caller's when no thread can
// be started): session creation and warm-up run OpenMP parallel regions, and
// the team of threads such a region leaves behind then goes with that thread
// instead of idling beside the workers' teams for the rest of the process.
// Logs one ERROR line "model '<name>' version <v> unavailable: <why>" on
// failure, one INFO line with the load time, sessions, instances, partition
// summary and arena usage on success. Thread-safe.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "server/models/model.h"

namespace onyx::server {

// Model::Load's result, unchanged (errors included), as a shared Model.
absl::StatusOr<std::shared_ptr<const Model>> LoadModelVersion(const Model::Options& options);

}  // namespace onyx::server
