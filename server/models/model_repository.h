// ModelRepository: the models under <root>/<model>/<version>/model.onnx and
// their lifecycle states.
//
//   ModelRepository::Options options;
//   options.root = "/models";
//   ASSIGN_OR_RETURN(auto repository, ModelRepository::Create(options));
//   repository->LoadAll();                              // blocks; slow
//   ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, repository->GetReady("mlp", ""));
//
// Layout: every directory under root (not starting with '.') is a model; its
// numeric subdirectories are versions and the highest one is served. A model that
// fails to load is UNAVAILABLE with the reason while the others serve.
// Lookups copy a shared_ptr to an immutable snapshot under a short lock and never
// wait for a load; a Model stays alive while a request holds it.
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "onyx/session.h"
#include "server/models/model.h"

namespace onyx::server {

// Lifecycle of a model in the repository (as RepositoryIndex reports it).
enum class ModelState {
  kLoading,      // sessions being built; not yet serving
  kReady,        // serving
  kUnavailable,  // failed to load, or not loaded (explicit mode); see reason
  kUnloading,    // draining before removal
};

// "LOADING" | "READY" | "UNAVAILABLE" | "UNLOADING".
absl::string_view ModelStateName(ModelState state);

struct ModelStatus {
  std::string name;
  std::string version;  // served (or to-be-served) version; "" when none found
  ModelState state = ModelState::kUnavailable;
  std::string reason;  // why not READY; empty when READY
};

class ModelRepository {
 public:
  struct Options {
    std::string root;
    // Base options for every session (providers, threads).
    onyx::SessionOptions session_options;
    // Optional: told about every engine run of every model's dynamic batcher
    // (the model's name, requests merged, their rows). Must not block.
    std::function<void(const std::string& model, int64_t requests, int64_t rows)> on_batch;
  };

  // NOT_FOUND when root is not a directory. Does not scan or load.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Create(const Options& options);

  // Stops every model (draining its queue).
  ~ModelRepository();

  // Scans root, marks every model found LOADING, then loads them one by one;
  // each ends READY or UNAVAILABLE. Blocks until all are done. Call once.
  void LoadAll();

  // Scans root and lists every model found as UNAVAILABLE ("not loaded") without
  // loading anything (load_mode explicit).
  void DiscoverOnly();

  // The served model for `name`. `version` "" means the served version; any
  // other value must equal it. NOT_FOUND for an unknown name or version,
  // UNAVAILABLE (with the reason) when the model is not READY.
  absl::StatusOr<std::shared_ptr<const Model>> GetReady(absl::string_view name,
                                                        absl::string_view version) const;

  // State of one model; NOT_FOUND when the repository has no such model.
  absl::StatusOr<ModelStatus> GetStatus(absl::string_view name) const;

  // Every model, sorted by name.
  std::vector<ModelStatus> Index() const;

  // Every loaded model version (READY or UNLOADING), sorted by name then
  // version: what metrics read at scrape time. The shared_ptrs keep them alive.
  std::vector<std::shared_ptr<const Model>> LoadedModels() const;

  // Marks every model UNLOADING, drains and stops them, then forgets them.
  void UnloadAll();

  // Loads (or reloads) one model: rescans <root>/<name> and serves its highest
  // version. A model with no serving version is LOADING meanwhile; a serving one
  // keeps serving until the new version is READY, then the old one drains (every
  // request it accepted completes). Blocks for the whole load. Errors:
  // INVALID_ARGUMENT ("outside the repository") for a name with '/', '\\', "..",
  // a leading '.', or one that resolves outside root; NOT_FOUND when root has no
  // such directory; otherwise the load error — the model is then UNAVAILABLE
  // with that reason, unless an older version keeps serving.
  absl::Status Load(absl::string_view name);

  // Marks the model UNLOADING (no new requests), drains its accepted requests,
  // drops its sessions and leaves it UNAVAILABLE ("unloaded"). Blocks until
  // drained. Unloading a model that is not loaded is OK. Errors: as Load's
  // name checks, NOT_FOUND for a name the repository does not list.
  absl::Status Unload(absl::string_view name);

  const std::string& root() const { return options_.root; }

 private:
  struct Entry {
    ModelStatus status;
    int64_t version = -1;                // -1: no usable version directory
    std::shared_ptr<const Model> model;  // set iff READY (or UNLOADING)
  };
  using Table = std::map<std::string, Entry, std::less<>>;

  explicit ModelRepository(Options options);
  // Finds models and their highest version on disk.
  Table Scan() const;
  // One model directory; state LOADING, or UNAVAILABLE without a version.
  Entry ScanOne(const std::string& name) const;
  // INVALID_ARGUMENT unless `name` is a plain directory name inside root.
  absl::Status CheckName(absl::string_view name) const;
  // Builds version entry.version of `name`; fills entry.model or the reason.
  void LoadEntry(const std::string& name, Entry& entry) const;
  std::shared_ptr<const Table> Snapshot() const;
  // Copy-on-write update of one entry (or insertion).
  void Update(const std::string& name, Entry entry);
  void Publish(std::shared_ptr<const Table> table);

  const Options options_;
  // Serialises Load, Unload, LoadAll and UnloadAll; held across a whole load.
  absl::Mutex lifecycle_mu_ ABSL_ACQUIRED_BEFORE(write_mu_);
  absl::Mutex write_mu_;  // serialises copy-on-write updates
  mutable absl::Mutex mu_;
  std::shared_ptr<const Table> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server
