#include "server/models/model_repository.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "onyx/memory.h"
#include "onyx/status_macros.h"
#include "spdlog/spdlog.h"

namespace onyx::server {

namespace fs = std::filesystem;

namespace {

constexpr char kModelFile[] = "model.onnx";

// Version directories of `dir` whose names are canonical version numbers:
// version -> directory name. Other all-digit names ("01", "0", past int64) are
// skipped with a warning so that an operator sees why a version is missing.
std::map<int64_t, std::string> ScanVersions(const fs::path& dir) {
  std::map<int64_t, std::string> versions;
  std::error_code ec;
  for (const fs::directory_entry& sub : fs::directory_iterator(dir, ec)) {
    const std::string name = sub.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos ||
        !sub.is_directory(ec)) {
      continue;
    }
    absl::StatusOr<int64_t> version = ParseModelVersion(name);
    if (!version.ok()) {
      spdlog::warn("ignoring version directory {}: {}", sub.path().string(),
                   std::string(version.status().message()));
      continue;
    }
    versions.emplace(*version, name);
  }
  return versions;
}

// OK when `path` resolves (symlinks followed) inside `root`, itself resolved;
// UNAVAILABLE naming `what` and both resolved paths otherwise.
absl::Status CheckInsideRoot(const fs::path& path, const fs::path& root, absl::string_view what) {
  std::error_code ec;
  fs::path resolved_root = fs::weakly_canonical(root, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat(what, ": cannot resolve ", root.string(), ": ", ec.message()));
  }
  const fs::path resolved = fs::weakly_canonical(path, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat(what, " ", path.string(), ": cannot resolve: ", ec.message()));
  }
  // "/models/" ends in an empty component that no path below it has.
  if (!resolved_root.has_filename()) resolved_root = resolved_root.parent_path();
  auto [root_end, unused] =
      std::mismatch(resolved_root.begin(), resolved_root.end(), resolved.begin(), resolved.end());
  if (root_end != resolved_root.end()) {
    return absl::UnavailableError(absl::StrCat(what, " ", path.string(), " resolves to ",
                                               resolved.string(),
                                               ", outside the repository root ",
                                               resolved_root.string(), " (refused)"));
  }
  return absl::OkStatus();
}

// The version of a file override key "<version>/model.onnx"; INVALID_ARGUMENT
// for anything else (which rules out "..", absolute paths and other names).
absl::StatusOr<int64_t> OverrideVersion(const std::string& path) {
  const std::vector<std::string> parts = absl::StrSplit(path, '/');
  absl::StatusOr<int64_t> version = absl::InvalidArgumentError("not '<version>/model.onnx'");
  if (parts.size() == 2 && parts[1] == kModelFile) version = ParseModelVersion(parts[0]);
  if (!version.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("RepositoryModelLoad parameter 'file:", path,
                     "': expected 'file:<version>/model.onnx' with a version number "
                     "(a positive decimal integer without leading zeros): ",
                     version.status().message()));
  }
  return version;
}

// Writes the override files to a fresh private directory; the returned path is
// removed when the last copy of the pointer goes.
absl::StatusOr<std::shared_ptr<const std::string>> WriteOverrideFiles(
    const std::map<std::string, std::string>& files) {
  for (const auto& [path, unused] : files) RETURN_IF_ERROR(OverrideVersion(path).status());
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "onyx-load-XXXXXX").string();
  if (ec || mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError("cannot create a temporary directory for the model files");
  }
  auto dir = std::shared_ptr<const std::string>(new std::string(pattern), [](const std::string* p) {
    std::error_code ignored;
    fs::remove_all(*p, ignored);
    delete p;
  });
  for (const auto& [path, bytes] : files) {
    const fs::path target = fs::path(*dir) / path;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (ec || !out.good()) {
      return absl::InternalError(absl::StrCat("cannot write the model file ", path));
    }
  }
  return dir;
}

// One line for the load log: providers, partitions, Memcpy and CPU fallback.
std::string PartitionSummary(const onyx::PartitionReport& report) {
  std::vector<std::string> providers;
  for (const auto& [provider, nodes] : report.nodes_per_provider) {
    providers.push_back(absl::StrCat(provider, ": ", nodes));
  }
  std::string out = absl::StrCat("nodes {", absl::StrJoin(providers, ", "), "}, ",
                                 report.partitions, " partition(s), ", report.memcpy_nodes,
                                 " Memcpy, ", report.fallback_nodes.size(), " CPU fallback");
  for (const onyx::FallbackNode& node : report.fallback_nodes) {
    absl::StrAppend(&out, " [", node.op_type, " '", node.node, "' declined by ", node.provider,
                    "]");
  }
  return out;
}

// The version's own arenas (group "<model>/<version>", see Model::Load).
std::string ArenaSummary(const std::string& group) {
  std::vector<std::string> arenas;
  for (const onyx::ArenaStats& a : onyx::GetArenaStats()) {
    if (a.group != group) continue;
    arenas.push_back(absl::StrCat(a.device, ": in use ", a.in_use_bytes, " B, peak ",
                                  a.peak_in_use_bytes, " B, reserved ", a.reserved_bytes,
                                  " B, largest free block ", a.largest_free_block, " B"));
  }
  return absl::StrJoin(arenas, "; ");
}

std::string SessionLabels(const BucketSessions& sessions) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < sessions.size(); ++i) labels.push_back(sessions.bucket_label(i));
  return absl::StrJoin(labels, ", ");
}

}  // namespace

absl::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return "LOADING";
    case ModelState::kReady:
      return "READY";
    case ModelState::kUnavailable:
      return "UNAVAILABLE";
    case ModelState::kUnloading:
      return "UNLOADING";
  }
  return "UNKNOWN";
}

absl::StatusOr<int64_t> ParseModelVersion(absl::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a decimal number (expected digits only)"));
  }
  const size_t significant = text.find_first_not_of('0');
  if (significant == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is 0, not a version (versions start at 1)"));
  }
  if (significant > 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' has a leading zero (expected '",
                                                   text.substr(significant), "')"));
  }
  int64_t version = 0;
  if (!absl::SimpleAtoi(text, &version)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is larger than the largest version, ", std::numeric_limits<int64_t>::max()));
  }
  return version;
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

void ModelRepository::Publish(std::shared_ptr<const Table> table) {
  absl::MutexLock lock(&mu_);
  table_ = std::move(table);
}

void ModelRepository::Update(const std::string& name, Entry entry) {
  absl::MutexLock write_lock(&write_mu_);
  auto table = std::make_shared<Table>(*Snapshot());
  (*table)[name] = std::move(entry);
  Publish(std::move(table));
}

void ModelRepository::Forget(const std::string& name) {
  absl::MutexLock write_lock(&write_mu_);
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
    model_options.on_batch = [on_batch = options_.on_batch, name,
                              version_label = absl::StrCat(version)](int64_t requests, int64_t rows) {
      on_batch(name, version_label, requests, rows);
    };
  }
  if (options_.on_timing) {
    model_options.on_timing = [on_timing = options_.on_timing, name,
                               version_label = absl::StrCat(version)](absl::Duration queued,
                                                                      absl::Duration compute) {
      on_timing(name, version_label, queued, compute);
    };
  }
  // Session creation and warm-up run kernels, and a thread that has run an
  // OpenMP parallel region keeps a team of threads for the rest of its life.
  // Loading on a thread of its own lets that team go with it instead of idling
  // beside the batcher workers' teams: with more OpenMP threads than CPUs,
  // libgomp stops spinning and every parallel region of every request pays a
  // thread wake-up (resnet with 1 instance x 2 threads: 3.2 ms per request
  // instead of 1.3).
  absl::StatusOr<std::unique_ptr<Model>> model = absl::InternalError("model load did not run");
  try {
    std::thread([&] { model = Model::Load(model_options); }).join();
  } catch (const std::system_error&) {
    model = Model::Load(model_options);  // no thread to spare: load here
  }
  if (!model.ok()) {
    spdlog::error("model '{}' version {} unavailable: {}", name, version,
                  std::string(model.status().message()));
    return model.status();
  }
  const BucketSessions& sessions = (*model)->sessions();
  const ModelConfig& resolved = (*model)->config();
  spdlog::info("model '{}' version {} ready in {:.3f} s; sessions [{}]; {} instance(s) x {} thread(s); {}; arena {}",
               name, version, absl::ToDoubleSeconds((*model)->load_duration()), SessionLabels(sessions),
               resolved.instance_count, EffectiveIntraOpThreads(resolved, onyx::ProcessCpuQuota()),
               PartitionSummary(sessions.session(0).partition_report()),
               ArenaSummary(absl::StrCat(name, "/", version)));
  return std::shared_ptr<const Model>(std::move(*model));
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
    absl::MutexLock write_lock(&write_mu_);
    Publish(std::move(table));
  }
  spdlog::info("model repository {}: {} model(s) found", options_.root, names.size());
  for (const std::string& name : names) {
    (void)LoadLocked(name, LoadOverrides{});  // failures are logged and in the index
  }
}

absl::Status ModelRepository::CheckName(absl::string_view name) const {
  const auto outside = [name] {
    return absl::InvalidArgumentError(
        absl::StrCat("model name '", name, "' is outside the repository"));
  };
  if (name.empty() || name[0] == '.' || name.find('/') != absl::string_view::npos ||
      name.find('\\') != absl::string_view::npos || name.find('\0') != absl::string_view::npos) {
    return outside();
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(options_.root, ec);
  const fs::path resolved = fs::weakly_canonical(fs::path(options_.root) / std::string(name), ec);
  if (ec || resolved.parent_path() != root) return outside();
  return absl::OkStatus();
}

absl::Status ModelRepository::Load(absl::string_view name_view, const LoadOverrides& overrides) {
  RETURN_IF_ERROR(CheckName(name_view));
  const std::string name(name_view);
  for (const auto& [path, unused] : overrides.files) RETURN_IF_ERROR(OverrideVersion(path).status());
  std::error_code ec;
  if (overrides.files.empty() && !fs::is_directory(fs::path(options_.root) / name, ec)) {
    return absl::NotFoundError(
        absl::StrCat("model '", name, "' is not in the repository ", options_.root));
  }
  absl::MutexLock lifecycle(&lifecycle_mu_);
  return LoadLocked(name, overrides);
}

absl::Status ModelRepository::LoadLocked(const std::string& name, const LoadOverrides& overrides) {
  const fs::path dir = fs::path(options_.root) / name;
  Entry working;
  {
    std::shared_ptr<const Table> table = Snapshot();
    auto it = table->find(name);
    if (it != table->end()) working = it->second;
  }
  bool serving = false;
  for (const auto& [version, v] : working.versions) serving |= v.status.state == ModelState::kReady;
  // Refuses the load: the model keeps what it serves, or becomes one
  // UNAVAILABLE entry with the reason.
  auto refuse = [&](absl::Status status) {
    spdlog::error("model '{}' unavailable: {}", name, std::string(status.message()));
    if (!serving && !OnDisk(name)) {
      // Known only through this load's files: the caller has the error, and
      // the repository (and the metrics' label values) keeps no trace of it.
      Forget(name);
    } else if (!serving) {
      Entry failed;
      failed.status = ModelStatus{name, "", ModelState::kUnavailable, std::string(status.message())};
      Update(name, std::move(failed));
    }
    return status;
  };

  // A model directory symlinked out of the repository is not served (Load's
  // CheckName refuses its name earlier; LoadAll gets here).
  if (absl::Status inside = CheckInsideRoot(dir, options_.root, absl::StrCat("model '", name,
                                                                             "': directory"));
      !inside.ok()) {
    return refuse(inside);
  }

  std::string config_source = (dir / "config.yaml").string();
  absl::StatusOr<ModelConfigFile> config;
  if (overrides.config.has_value()) {
    config_source = absl::StrCat("RepositoryModelLoad parameter 'config' of model '", name, "'");
    config = ParseModelConfig(*overrides.config, config_source);
  } else {
    config = LoadModelConfigFile(config_source);
  }
  if (!config.ok()) return refuse(config.status());

  std::shared_ptr<const std::string> files_dir;
  fs::path versions_root = dir;
  if (!overrides.files.empty()) {
    absl::StatusOr<std::shared_ptr<const std::string>> written =
        WriteOverrideFiles(overrides.files);
    if (!written.ok()) return refuse(written.status());
    files_dir = std::move(*written);
    versions_root = *files_dir;
  }
  // Version directories and model files must stay inside the repository (or
  // the load's private directory).
  const fs::path containment_root =
      overrides.files.empty() ? fs::path(options_.root) : versions_root;
  const std::map<int64_t, std::string> on_disk = ScanVersions(versions_root);
  std::vector<int64_t> available;
  for (const auto& [version, unused] : on_disk) available.push_back(version);
  const std::vector<int64_t> selected =
      SelectVersions(config->version_policy.value_or(VersionPolicy{}), available);
  if (selected.empty()) {
    return refuse(absl::UnavailableError(
        absl::StrCat("model '", name, "': no numeric version directory in ",
                     overrides.files.empty() ? dir.string() : std::string("the load's files"))));
  }

  // Newly selected versions show as LOADING beside those serving.
  working.files_dir = files_dir;
  for (int64_t version : selected) {
    Version& v = working.versions[version];
    if (v.status.state != ModelState::kReady) {
      v.status = ModelStatus{name, absl::StrCat(version), ModelState::kLoading, ""};
    }
  }
  Update(name, working);

  std::vector<std::string> failures;
  absl::StatusCode first_failure = absl::StatusCode::kOk;
  std::vector<std::shared_ptr<const Model>> replaced;
  for (int64_t version : selected) {
    Version& v = working.versions[version];
    absl::StatusOr<std::shared_ptr<const Model>> model;
    auto directory = on_disk.find(version);
    if (directory == on_disk.end()) {
      model = absl::UnavailableError(absl::StrCat("model '", name, "' version ", version,
                                                  ": version_policy selects it but there is no "
                                                  "version directory ",
                                                  (versions_root / absl::StrCat(version)).string()));
      spdlog::error("{}", std::string(model.status().message()));
    } else {
      const fs::path version_dir = versions_root / directory->second;
      const std::string what = absl::StrCat("model '", name, "' version ", version, ":");
      absl::Status inside = CheckInsideRoot(version_dir, containment_root,
                                            absl::StrCat(what, " version directory"));
      if (inside.ok()) {
        inside = CheckInsideRoot(version_dir / kModelFile, containment_root,
                                 absl::StrCat(what, " model file"));
      }
      if (inside.ok()) {
        model = LoadVersion(name, version, (version_dir / kModelFile).string(), *config,
                            config_source);
      } else {
        model = inside;
        spdlog::error("{}", std::string(inside.message()));
      }
    }
    if (model.ok()) {
      if (v.model != nullptr) replaced.push_back(std::move(v.model));
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

  // Versions no longer selected drain, then go.
  std::vector<std::shared_ptr<const Model>> dropped;
  for (auto& [version, v] : working.versions) {
    if (std::binary_search(selected.begin(), selected.end(), version)) continue;
    if (v.model != nullptr) {
      v.status.state = ModelState::kUnloading;
      v.status.reason = "unloading: no longer selected by version_policy";
      dropped.push_back(v.model);
    }
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
    it = std::binary_search(selected.begin(), selected.end(), it->first)
             ? std::next(it)
             : working.versions.erase(it);
  }
  bool any_loaded = false;
  for (const auto& [version, v] : working.versions) any_loaded |= v.model != nullptr;
  if (!any_loaded && !OnDisk(name)) {
    Forget(name);  // a one-off from load files that serves nothing: no trace
  } else {
    Update(name, std::move(working));
  }
  if (!failures.empty()) return absl::Status(first_failure, absl::StrJoin(failures, "; "));
  return absl::OkStatus();
}

absl::Status ModelRepository::Unload(absl::string_view name_view) {
  RETURN_IF_ERROR(CheckName(name_view));
  const std::string name(name_view);
  absl::MutexLock lifecycle(&lifecycle_mu_);
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
  absl::MutexLock write_lock(&write_mu_);
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
    return absl::UnavailableError(absl::StrCat("model '", name, "' is ",
                                               ModelStateName(entry.status.state),
                                               entry.status.reason.empty() ? "" : ": ",
                                               entry.status.reason));
  }
  if (version.empty()) {
    std::vector<std::string> states;
    for (auto v = entry.versions.rbegin(); v != entry.versions.rend(); ++v) {
      if (v->second.status.state == ModelState::kReady && v->second.model != nullptr) {
        return v->second.model;
      }
      states.push_back(absl::StrCat("version ", v->first, " ",
                                    ModelStateName(v->second.status.state),
                                    v->second.status.reason.empty() ? "" : ": ",
                                    v->second.status.reason));
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
  absl::MutexLock write_lock(&write_mu_);
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
