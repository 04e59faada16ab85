#include "server/models/model_repository.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/status_macros.h"
#include "server/models/override_files.h"
#include "server/models/version_loader.h"
#include "spdlog/spdlog.h"

namespace onyx::server {

namespace fs = std::filesystem;

absl::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading: return "LOADING";
    case ModelState::kReady: return "READY";
    case ModelState::kUnavailable: return "UNAVAILABLE";
    case ModelState::kUnloading: return "UNLOADING";
  }
  return "UNKNOWN";
}

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Create(const Options& options) {
  std::error_code ec;
  if (!fs::is_directory(options.root, ec)) {
    return absl::NotFoundError(
        absl::StrCat("model repository '", options.root, "' is not a directory"));
  }
  return std::unique_ptr<ModelRepository>(new ModelRepository(options));
}

ModelRepository::ModelRepository(Options options)
    : options_(std::move(options)), table_(std::make_shared<const Table>()) {}

ModelRepository::~ModelRepository() { UnloadAll(); }

std::vector<std::string> ModelRepository::ScanNames() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& dir : fs::directory_iterator(options_.root, ec)) {
    const std::string name = dir.path().filename().string();
    if (name.empty() || name[0] == '.' || !dir.is_directory(ec)) continue;
    names.push_back(name);
  }
  if (ec) spdlog::warn("scanning model repository {}: {}", options_.root, ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

std::shared_ptr<const ModelRepository::Table> ModelRepository::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return table_;
}

ModelRepository::Entry ModelRepository::CurrentEntry(const std::string& name) const {
  std::shared_ptr<const Table> table = Snapshot();
  auto it = table->find(name);
  return it == table->end() ? Entry{} : it->second;
}

void ModelRepository::Publish(std::shared_ptr<const Table> table) {
  absl::MutexLock lock(&mu_);
  table_ = std::move(table);
}

void ModelRepository::Update(const std::string& name, Entry entry) {
  auto table = std::make_shared<Table>(*Snapshot());
  (*table)[name] = std::move(entry);
  Publish(std::move(table));
}

void ModelRepository::Forget(const std::string& name) {
  auto table = std::make_shared<Table>(*Snapshot());
  table->erase(name);
  Publish(std::move(table));
}

bool ModelRepository::OnDisk(const std::string& name) const {
  std::error_code ec;
  return fs::is_directory(fs::path(options_.root) / name, ec);
}

absl::StatusOr<std::shared_ptr<const Model>> ModelRepository::LoadVersion(
    const std::string& name, int64_t version, const std::string& model_path,
    const ModelConfigFile& config, const std::string& config_source) const {
  Model::Options model_options;
  model_options.name = name;
  model_options.version = version;
  model_options.model_path = model_path;
  model_options.config_file = config;
  model_options.config_source = config_source;
  model_options.session_options = options_.session_options;
  if (options_.on_batch) {
    model_options.on_batch =
        [on_batch = options_.on_batch, name, version_label = absl::StrCat(version)](
            int64_t requests, int64_t rows) { on_batch(name, version_label, requests, rows); };
  }
  if (options_.on_timing) {
    model_options.on_timing =
        [on_timing = options_.on_timing, name, version_label = absl::StrCat(version)](
            absl::Duration queued, absl::Duration compute) {
      on_timing(name, version_label, queued, compute);
    };
  }
  if (!options_.version_lifetime) return LoadModelVersion(model_options);
  // Held before the load (warm-up runs may record), released after the Model
  // is destroyed: its drain runs the last callbacks that record its series.
  std::shared_ptr<void> hold = options_.version_lifetime(name, absl::StrCat(version));
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModelVersion(model_options));
  const Model* raw = model.get();
  return std::shared_ptr<const Model>(
      raw, [model = std::move(model), hold = std::move(hold)](const Model*) mutable {
        model.reset();
        hold.reset();
      });
}

void ModelRepository::LoadAll() {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  const std::vector<std::string> names = ScanNames();
  {
    auto table = std::make_shared<Table>();
    for (const std::string& name : names) {
      Entry& entry = (*table)[name];
      entry.status = ModelStatus{name, "", ModelState::kLoading, ""};
    }
    Publish(std::move(table));
  }
  spdlog::info("model repository {}: {} model(s) found", options_.root, names.size());
  for (const std::string& name : names) {
    (void)LoadLocked(name, LoadOverrides{});  // failures are logged and in the index
  }
}

absl::Status ModelRepository::Load(absl::string_view name_view, const LoadOverrides& overrides) {
  RETURN_IF_ERROR(CheckModelName(options_.root, name_view));
  const std::string name(name_view);
  for (const auto& [path, unused] : overrides.files) {
    RETURN_IF_ERROR(FileOverrideVersion(path).status());
  }
  std::error_code ec;
  if (overrides.files.empty() && !fs::is_directory(fs::path(options_.root) / name, ec)) {
    return absl::NotFoundError(
        absl::StrCat("model '", name, "' is not in the repository ", options_.root));
  }
  absl::MutexLock lifecycle(&lifecycle_mu_);
  absl::Status loaded = LoadLocked(name, overrides);
  // The versions it replaced have drained and, unless a request still holds
  // one, been destroyed with the calls to LoadLocked.
  heap_release_.MaybeRelease();
  return loaded;
}

struct ModelRepository::LoadPlan {
  ModelConfigFile config;
  std::string config_source;  // names the configuration in errors
  // The private directory of overrides.files; null when loading from root.
  std::shared_ptr<const std::string> files_dir;
  std::vector<ResolvedVersion> versions;  // ascending, non-empty
};

absl::Status ModelRepository::LoadLocked(const std::string& name, const LoadOverrides& overrides) {
  Entry working = CurrentEntry(name);
  absl::StatusOr<LoadPlan> plan = PlanLoad(name, overrides);
  if (!plan.ok()) return Refuse(name, working, plan.status());

  // Newly selected versions show as LOADING beside those serving.
  working.files_dir = plan->files_dir;
  std::vector<int64_t> selected;
  for (const ResolvedVersion& resolved : plan->versions) {
    selected.push_back(resolved.version);
    Version& v = working.versions[resolved.version];
    if (v.status.state != ModelState::kReady) {
      v.status = ModelStatus{name, absl::StrCat(resolved.version), ModelState::kLoading, ""};
    }
  }
  Update(name, working);

  std::vector<std::shared_ptr<const Model>> replaced;
  absl::Status loaded = LoadVersions(name, *plan, working, &replaced);
  DrainUnselected(name, selected, std::move(working), std::move(replaced));
  return loaded;
}

absl::StatusOr<ModelRepository::LoadPlan> ModelRepository::PlanLoad(
    const std::string& name, const LoadOverrides& overrides) const {
  const fs::path dir = fs::path(options_.root) / name;
  // A model directory symlinked out of the repository is not served (Load's
  // CheckModelName refuses its name earlier; LoadAll gets here).
  RETURN_IF_ERROR(
      CheckInsideRoot(dir, options_.root, absl::StrCat("model '", name, "': directory")));

  LoadPlan plan;
  plan.config_source = (dir / "config.yaml").string();
  if (overrides.config.has_value()) {
    plan.config_source =
        absl::StrCat("RepositoryModelLoad parameter 'config' of model '", name, "'");
    ASSIGN_OR_RETURN(plan.config, ParseModelConfig(*overrides.config, plan.config_source));
  } else {
    ASSIGN_OR_RETURN(plan.config, LoadModelConfigFile(plan.config_source));
  }

  // Version directories and model files must stay inside the repository, or
  // inside the load's private directory.
  VersionSource source{name, dir, options_.root, dir.string()};
  if (!overrides.files.empty()) {
    for (const auto& [path, unused] : overrides.files)
      RETURN_IF_ERROR(FileOverrideVersion(path).status());
    ASSIGN_OR_RETURN(plan.files_dir, WriteOverrideFiles(overrides.files));
    source.dir = *plan.files_dir;
    source.root = *plan.files_dir;
    source.where = "the load's files";
  }
  VersionResolution resolution =
      ResolveVersions(source, plan.config.version_policy.value_or(VersionPolicy{}));
  for (const std::string& line : resolution.ignored) spdlog::warn("{}", line);
  ASSIGN_OR_RETURN(plan.versions, std::move(resolution.versions));
  return plan;
}

absl::Status ModelRepository::Refuse(const std::string& name, const Entry& current,
                                     absl::Status status) {
  spdlog::error("model '{}' unavailable: {}", name, std::string(status.message()));
  bool serving = false;
  for (const auto& [version, v] : current.versions) serving |= v.status.state == ModelState::kReady;
  if (serving) return status;
  if (!OnDisk(name)) {
    // Known only through this load's files: the caller has the error, and
    // the repository (and the metrics' label values) keeps no trace of it.
    Forget(name);
  } else {
    Entry failed;
    failed.status = ModelStatus{name, "", ModelState::kUnavailable, std::string(status.message())};
    Update(name, std::move(failed));
  }
  return status;
}

absl::Status ModelRepository::LoadVersions(const std::string& name, const LoadPlan& plan,
                                           Entry& working,
                                           std::vector<std::shared_ptr<const Model>>* replaced) {
  std::vector<std::string> failures;
  absl::StatusCode first_failure = absl::StatusCode::kOk;
  for (const ResolvedVersion& resolved : plan.versions) {
    Version& v = working.versions[resolved.version];
    absl::StatusOr<std::shared_ptr<const Model>> model;
    if (resolved.model_path.ok()) {
      model = LoadVersion(name, resolved.version, *resolved.model_path, plan.config,
                          plan.config_source);
    } else {
      model = resolved.model_path.status();
      spdlog::error("{}", std::string(model.status().message()));
    }
    if (model.ok()) {
      if (v.model != nullptr) replaced->push_back(std::move(v.model));
      v.model = std::move(*model);
      v.status.state = ModelState::kReady;
      v.status.reason.clear();
    } else {
      if (failures.empty()) first_failure = model.status().code();
      failures.push_back(std::string(model.status().message()));
      if (v.model == nullptr) {  // else the version it replaces keeps serving
        v.status.state = ModelState::kUnavailable;
        v.status.reason = std::string(model.status().message());
      }
    }
    Update(name, working);
  }
  if (!failures.empty()) return absl::Status(first_failure, absl::StrJoin(failures, "; "));
  return absl::OkStatus();
}

void ModelRepository::DrainUnselected(const std::string& name, const std::vector<int64_t>& selected,
                                      Entry working,
                                      std::vector<std::shared_ptr<const Model>> replaced) {
  const auto is_selected = [&selected](int64_t version) {
    return std::binary_search(selected.begin(), selected.end(), version);
  };
  std::vector<std::shared_ptr<const Model>> dropped;
  for (auto& [version, v] : working.versions) {
    if (is_selected(version) || v.model == nullptr) continue;
    v.status.state = ModelState::kUnloading;
    v.status.reason = "unloading: no longer selected by version_policy";
    dropped.push_back(v.model);
  }
  Update(name, working);
  // Requests that looked a replaced version up before the swap either enqueued
  // already (Stop drains them) or find it stopped and look the model up again.
  for (const auto& model : replaced) model->Stop();
  for (const auto& model : dropped) {
    model->Stop();
    spdlog::info("model '{}' version {} unloaded", name, model->version());
  }
  for (auto it = working.versions.begin(); it != working.versions.end();) {
    it = is_selected(it->first) ? std::next(it) : working.versions.erase(it);
  }
  bool any_loaded = false;
  for (const auto& [version, v] : working.versions) any_loaded |= v.model != nullptr;
  if (!any_loaded && !OnDisk(name)) {
    Forget(name);  // a one-off from load files that serves nothing: no trace
  } else {
    Update(name, std::move(working));
  }
}

absl::Status ModelRepository::Unload(absl::string_view name_view) {
  RETURN_IF_ERROR(CheckModelName(options_.root, name_view));
  const std::string name(name_view);
  absl::MutexLock lifecycle(&lifecycle_mu_);
  absl::Status unloaded = UnloadLocked(name);
  heap_release_.MaybeRelease();  // the versions dropped with UnloadLocked's references
  return unloaded;
}

absl::Status ModelRepository::UnloadLocked(const std::string& name) {
  std::shared_ptr<const Table> table = Snapshot();
  auto it = table->find(name);
  if (it == table->end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
  }
  Entry entry = it->second;
  bool loaded = false;
  for (auto& [version, v] : entry.versions) {
    if (v.model == nullptr) continue;
    loaded = true;
    v.status.state = ModelState::kUnloading;
    v.status.reason = "unloading";
  }
  if (!loaded) return absl::OkStatus();
  Update(name, entry);
  for (auto& [version, v] : entry.versions) {
    if (v.model != nullptr) v.model->Stop();
  }
  if (OnDisk(name)) {
    Entry unloaded;
    unloaded.status = ModelStatus{name, "", ModelState::kUnavailable, "unloaded"};
    Update(name, std::move(unloaded));
  } else {
    Forget(name);  // loaded from RepositoryModelLoad files only: nothing left to list
  }
  spdlog::info("model '{}' unloaded", name);
  return absl::OkStatus();
}

void ModelRepository::DiscoverOnly() {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  auto table = std::make_shared<Table>();
  for (const std::string& name : ScanNames()) {
    (*table)[name].status =
        ModelStatus{name, "", ModelState::kUnavailable, "not loaded (load_mode explicit)"};
  }
  Publish(std::move(table));
}

absl::StatusOr<std::shared_ptr<const Model>> ModelRepository::GetReady(
    absl::string_view name, absl::string_view version) const {
  std::shared_ptr<const Table> table = Snapshot();
  auto it = table->find(name);
  if (it == table->end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
  }
  const Entry& entry = it->second;
  if (entry.versions.empty()) {
    return absl::UnavailableError(
        absl::StrCat("model '", name, "' is ", ModelStateName(entry.status.state),
                     entry.status.reason.empty() ? "" : ": ", entry.status.reason));
  }
  if (version.empty()) {
    std::vector<std::string> states;
    for (auto v = entry.versions.rbegin(); v != entry.versions.rend(); ++v) {
      if (v->second.status.state == ModelState::kReady && v->second.model != nullptr) {
        return v->second.model;
      }
      states.push_back(
          absl::StrCat("version ", v->first, " ", ModelStateName(v->second.status.state),
                       v->second.status.reason.empty() ? "" : ": ", v->second.status.reason));
    }
    return absl::UnavailableError(absl::StrCat("model '", name, "' has no READY version (",
                                               absl::StrJoin(states, "; "), ")"));
  }
  // Only the canonical spelling names a version: "01" and "+1" are not "1".
  absl::StatusOr<int64_t> number = ParseModelVersion(version);
  auto v = number.ok() ? entry.versions.find(*number) : entry.versions.end();
  if (v == entry.versions.end()) {
    std::vector<int64_t> served;
    for (const auto& [n, unused] : entry.versions) served.push_back(n);
    return absl::NotFoundError(absl::StrCat("model '", name, "' has no version '", version,
                                            "' (versions: ", absl::StrJoin(served, ", "), ")"));
  }
  if (v->second.status.state != ModelState::kReady || v->second.model == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "model '", name, "' version ", v->first, " is ", ModelStateName(v->second.status.state),
        v->second.status.reason.empty() ? "" : ": ", v->second.status.reason));
  }
  return v->second.model;
}

absl::StatusOr<ModelStatus> ModelRepository::GetStatus(absl::string_view name) const {
  std::shared_ptr<const Table> table = Snapshot();
  auto it = table->find(name);
  if (it == table->end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
  }
  const Entry& entry = it->second;
  if (entry.versions.empty()) return entry.status;
  for (auto v = entry.versions.rbegin(); v != entry.versions.rend(); ++v) {
    if (v->second.status.state == ModelState::kReady) return v->second.status;
  }
  return entry.versions.rbegin()->second.status;
}

std::vector<ModelStatus> ModelRepository::Index() const {
  std::shared_ptr<const Table> table = Snapshot();
  std::vector<ModelStatus> index;
  index.reserve(table->size());
  for (const auto& [name, entry] : *table) {
    if (entry.versions.empty()) index.push_back(entry.status);
    for (const auto& [version, v] : entry.versions) index.push_back(v.status);
  }
  return index;
}

std::vector<std::shared_ptr<const Model>> ModelRepository::LoadedModels() const {
  std::shared_ptr<const Table> table = Snapshot();
  std::vector<std::shared_ptr<const Model>> models;
  for (const auto& [name, entry] : *table) {
    for (const auto& [version, v] : entry.versions) {
      if (v.model != nullptr) models.push_back(v.model);
    }
  }
  return models;
}

std::vector<std::shared_ptr<const Model>> ModelRepository::ReadyModels(
    absl::string_view name) const {
  std::shared_ptr<const Table> table = Snapshot();
  std::vector<std::shared_ptr<const Model>> models;
  for (const auto& [model_name, entry] : *table) {
    if (!name.empty() && model_name != name) continue;
    for (const auto& [version, v] : entry.versions) {
      if (v.status.state == ModelState::kReady && v.model != nullptr) models.push_back(v.model);
    }
  }
  return models;
}

void ModelRepository::UnloadAll() {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  auto unloading = std::make_shared<Table>(*Snapshot());
  for (auto& [name, entry] : *unloading) {
    for (auto& [version, v] : entry.versions) {
      if (v.model != nullptr) v.status.state = ModelState::kUnloading;
    }
  }
  Publish(unloading);
  for (auto& [name, entry] : *unloading) {
    for (auto& [version, v] : entry.versions) {
      if (v.model != nullptr) v.model->Stop();
    }
  }
  auto done = std::make_shared<Table>();
  for (const auto& [name, entry] : *unloading) {
    (*done)[name].status = ModelStatus{name, "", ModelState::kUnavailable, "unloaded"};
  }
  Publish(std::move(done));
}

}  // namespace onyx::server
