// ModelRepository: the models under <root>/<model>/<version>/model.onnx, the
// versions each one serves, and their lifecycle states.
//
//   ModelRepository::Options options;
//   options.root = "/models";
//   ASSIGN_OR_RETURN(auto repository, ModelRepository::Create(options));
//   repository->LoadAll();                              // blocks; slow
//   ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, repository->GetReady("mlp", ""));
//
// Layout (repository_layout.h): every directory under root (not starting with
// '.') is a model; its subdirectories named by a version number
// (ParseModelVersion) are versions; other all-digit names ("01", "0", past
// int64) are skipped with a WARN log.
// A model directory, version directory or model.onnx that resolves (symlinks
// followed) outside root is refused: UNAVAILABLE with the reason. The model's
// version_policy (config.yaml: latest N, specific [..] or all; default latest
// 1) selects the versions served at once, each its own Model (sessions and
// batcher). A version that fails to load is UNAVAILABLE with the reason
// while the others serve; a model whose config.yaml is unreadable, or that has
// no version, is one UNAVAILABLE entry.
// Lookups copy a shared_ptr to an immutable snapshot under a short lock and
// never wait for a load; a Model stays alive while a request holds it.
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "onyx/session.h"
#include "server/config/model_config.h"
#include "server/models/heap_release.h"
#include "server/models/model.h"
#include "server/models/repository_layout.h"

namespace onyx::server {

// Lifecycle of a model version in the repository (as RepositoryIndex reports it).
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
  std::string version;  // the version described; "" for a model-wide entry
  ModelState state = ModelState::kUnavailable;
  std::string reason;  // why not READY; empty when READY
};

// What RepositoryModelLoad's parameters override for one load.
struct LoadOverrides {
  // Model configuration text (YAML or JSON) used instead of config.yaml.
  std::optional<std::string> config;
  // "<version>/model.onnx" -> file contents. When non-empty the model's
  // versions come from these files (written to a private temporary directory),
  // not from the repository directory.
  std::map<std::string, std::string> files;
};

class ModelRepository {
 public:
  struct Options {
    std::string root;
    // Base options for every session (providers, threads).
    onyx::SessionOptions session_options;
    // Optional: told about every engine run of every model's dynamic batcher
    // (the model's name and version, requests merged, their rows). Must not
    // block.
    std::function<void(const std::string& model, const std::string& version, int64_t requests,
                       int64_t rows)>
        on_batch;
    // Optional: each request's queue wait and engine run time, with the model's
    // name and version (see DynamicBatcher::Options::on_timing). Must not block.
    std::function<void(const std::string& model, const std::string& version, absl::Duration queued,
                       absl::Duration compute)>
        on_timing;
    // Optional: called before a version loads; the handle it returns is kept
    // until that version's Model is destroyed (after its drain, so after the
    // last callback above for that version), or dropped at once when the
    // load fails. onyxd holds the version's metric series with it.
    std::function<std::shared_ptr<void>(const std::string& model, const std::string& version)>
        version_lifetime;
  };

  // NOT_FOUND when root is not a directory. Does not scan or load.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Create(const Options& options);

  // Stops every model (draining its queue).
  ~ModelRepository();

  // Scans root and loads every model found, one by one, each selected version
  // ending READY or UNAVAILABLE. Blocks until all are done. Call once.
  void LoadAll() ABSL_LOCKS_EXCLUDED(lifecycle_mu_);

  // Scans root and lists every model found as UNAVAILABLE ("not loaded") without
  // loading anything (load_mode explicit).
  void DiscoverOnly() ABSL_LOCKS_EXCLUDED(lifecycle_mu_);

  // A serving version of `name`. `version` "" means the highest READY version;
  // any other value names one version in its canonical spelling
  // (ParseModelVersion: "1", not "01"). NOT_FOUND for an unknown name, a
  // non-canonical version or one the policy does not select (the message lists
  // the versions it does),
  // UNAVAILABLE (with the reason) when that version, or for "" every version,
  // is not READY.
  absl::StatusOr<std::shared_ptr<const Model>> GetReady(absl::string_view name,
                                                        absl::string_view version) const;

  // State of one model: its highest READY version, else its highest version,
  // else the model-wide entry. NOT_FOUND when the repository has no such model.
  absl::StatusOr<ModelStatus> GetStatus(absl::string_view name) const;

  // One entry per selected version (a model-wide entry for a model without
  // any), sorted by name then version.
  std::vector<ModelStatus> Index() const;

  // Every loaded model version (READY or UNLOADING), sorted by name then
  // version: what metrics read at scrape time. The shared_ptrs keep them alive.
  std::vector<std::shared_ptr<const Model>> LoadedModels() const;

  // Every READY version of `name` ("" = of every model), sorted by name then
  // version: what ModelMetadata and ModelStatistics describe.
  std::vector<std::shared_ptr<const Model>> ReadyModels(absl::string_view name) const;

  // Marks every model UNLOADING, drains and stops them, then forgets them.
  void UnloadAll() ABSL_LOCKS_EXCLUDED(lifecycle_mu_);

  // Loads (or reloads) one model: reads its configuration (or overrides.config)
  // and serves the versions its version_policy selects from <root>/<name> (or
  // from overrides.files). Each selected version loads beside whatever serves
  // now; a version that was serving keeps serving until its replacement is
  // READY; versions no longer selected drain (every request they accepted
  // completes) and unload. Blocks for the whole load. Errors:
  // INVALID_ARGUMENT ("outside the repository") for a name with '/', '\\',
  // "..", a leading '.', or one that resolves outside root, and for a file
  // override path that is not "<version>/model.onnx"; NOT_FOUND when root has
  // no such directory (and no files are given); a configuration that does not
  // parse (INVALID_ARGUMENT); otherwise, when versions fail, the first one's
  // error code with every failed version's message — those versions are
  // UNAVAILABLE with their reason while the rest serve. A model known only
  // through overrides.files (no directory under root) that fails to load and
  // serves nothing is not listed at all afterwards.
  absl::Status Load(absl::string_view name, const LoadOverrides& overrides = {})
      ABSL_LOCKS_EXCLUDED(lifecycle_mu_);

  // Marks every version UNLOADING (no new requests), drains their accepted
  // requests, drops their sessions and leaves the model UNAVAILABLE
  // ("unloaded"), or forgets it when it has no directory under root (it was
  // loaded from RepositoryModelLoad files). Blocks until drained. Unloading a
  // model that is not loaded is OK. Errors: as Load's name checks, NOT_FOUND
  // for a name the repository does not list.
  absl::Status Unload(absl::string_view name) ABSL_LOCKS_EXCLUDED(lifecycle_mu_);

  const std::string& root() const { return options_.root; }

 private:
  struct Version {
    ModelStatus status;
    std::shared_ptr<const Model> model;  // set iff READY or UNLOADING
  };
  struct Entry {
    ModelStatus status;                   // model-wide: used when `versions` is empty
    std::map<int64_t, Version> versions;  // the selected versions
    // The private directory holding override files; removed with the last copy.
    std::shared_ptr<const std::string> files_dir;
  };
  using Table = std::map<std::string, Entry, std::less<>>;
  // A load's configuration and resolved versions (defined in the .cc).
  struct LoadPlan;

  explicit ModelRepository(Options options);
  // Names of the model directories under root.
  std::vector<std::string> ScanNames() const;

  // Load() once the name is checked, in three steps: PlanLoad (configuration
  // and ResolveVersions), LoadVersions, then DrainUnselected.
  // Unload's work; the versions it drops are freed when it returns.
  absl::Status UnloadLocked(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_);
  absl::Status LoadLocked(const std::string& name, const LoadOverrides& overrides)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_);
  // The resolution step of a load: <root>/<name> must resolve inside root,
  // the configuration (or overrides.config) must parse, overrides.files are
  // written to a private directory, then ResolveVersions picks the versions
  // (its ignored directories are logged). The error is why nothing loads.
  absl::StatusOr<LoadPlan> PlanLoad(const std::string& name, const LoadOverrides& overrides) const;
  // A load that ends before any version loads, with `status`: a model that
  // serves keeps serving (`current` is its entry), one known only through the
  // load's files is forgotten, any other becomes one UNAVAILABLE entry with
  // the reason. Returns `status`.
  absl::Status Refuse(const std::string& name, const Entry& current, absl::Status status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_);
  // Loads each version of `plan` into `working` (whose selected versions are
  // LOADING or READY), publishing the entry after each one: READY with its new
  // Model, whose predecessor goes to `replaced` (still running); or, when it
  // fails, UNAVAILABLE with the reason unless a predecessor keeps serving.
  // OK, or the first failure's code with every failure's message.
  absl::Status LoadVersions(const std::string& name, const LoadPlan& plan, Entry& working,
                            std::vector<std::shared_ptr<const Model>>* replaced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_);
  // Swap and drain: versions of `working` not in `selected` (ascending) that
  // serve are published UNLOADING; then they and `replaced` are stopped
  // (every accepted request completes), and `working` without them is
  // published, or forgotten when it serves nothing and has no directory.
  void DrainUnselected(const std::string& name, const std::vector<int64_t>& selected, Entry working,
                       std::vector<std::shared_ptr<const Model>> replaced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_);
  // Builds one version (LoadModelVersion); OK with the model or the load error.
  absl::StatusOr<std::shared_ptr<const Model>> LoadVersion(const std::string& name, int64_t version,
                                                           const std::string& model_path,
                                                           const ModelConfigFile& config,
                                                           const std::string& config_source) const;

  std::shared_ptr<const Table> Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);
  // The table's entry for `name`, or an empty one.
  Entry CurrentEntry(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);
  // Copy-on-write update of one entry (or insertion).
  void Update(const std::string& name, Entry entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes `name` from the table (copy-on-write).
  void Forget(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Publish(std::shared_ptr<const Table> table) ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // True when <root>/<name> is a directory.
  bool OnDisk(const std::string& name) const;

  const Options options_;
  // Serialises Load, Unload, LoadAll, DiscoverOnly and UnloadAll, and held
  // across a whole load. Every change to the table happens under it, so a
  // writer's copy-on-write (Snapshot, change, Publish) needs no other lock.
  absl::Mutex lifecycle_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Gives back what drained versions freed once that is 64 MB or more (what
  // less frees, the next load reuses: malloc_arenas.h), at most once a second.
  HeapReleaseThrottle heap_release_{size_t{64} << 20, absl::Seconds(1)};
  // Held only to copy or swap table_: lookups never wait for a load.
  mutable absl::Mutex mu_;
  std::shared_ptr<const Table> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server
