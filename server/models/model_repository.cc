#include "server/models/model_repository.h"

#include <chrono>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "spdlog/spdlog.h"

namespace onyx::server {

namespace fs = std::filesystem;

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

ModelRepository::Entry ModelRepository::ScanOne(const std::string& name) const {
  std::error_code ec;
  const fs::path dir = fs::path(options_.root) / name;
  Entry entry;
  entry.status.name = name;
  for (const fs::directory_entry& sub : fs::directory_iterator(dir, ec)) {
    int64_t version = 0;
    if (sub.is_directory(ec) && absl::SimpleAtoi(sub.path().filename().string(), &version) &&
        version >= 0 && version > entry.version) {
      entry.version = version;
    }
  }
  if (entry.version < 0) {
    entry.status.state = ModelState::kUnavailable;
    entry.status.reason = absl::StrCat("no numeric version directory in ", dir.string());
  } else {
    entry.status.version = absl::StrCat(entry.version);
    entry.status.state = ModelState::kLoading;
  }
  return entry;
}

ModelRepository::Table ModelRepository::Scan() const {
  Table table;
  std::error_code ec;
  for (const fs::directory_entry& dir : fs::directory_iterator(options_.root, ec)) {
    const std::string name = dir.path().filename().string();
    if (name.empty() || name[0] == '.' || !dir.is_directory(ec)) continue;
    table.emplace(name, ScanOne(name));
  }
  if (ec) spdlog::warn("scanning model repository {}: {}", options_.root, ec.message());
  return table;
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

void ModelRepository::LoadEntry(const std::string& name, Entry& entry) const {
  Model::Options model_options;
  model_options.name = name;
  model_options.version = entry.version;
  model_options.directory = (fs::path(options_.root) / name).string();
  model_options.session_options = options_.session_options;
  if (options_.on_batch) {
    model_options.on_batch = [on_batch = options_.on_batch, name](int64_t requests, int64_t rows) {
      on_batch(name, requests, rows);
    };
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Model>> model = Model::Load(model_options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (model.ok()) {
    entry.model = std::move(*model);
    entry.status.state = ModelState::kReady;
    entry.status.reason.clear();
    spdlog::info("model '{}' version {} ready ({:.3f} s)", name, entry.version, seconds);
  } else {
    entry.status.state = ModelState::kUnavailable;
    entry.status.reason = std::string(model.status().message());
    spdlog::error("model '{}' unavailable: {}", name, entry.status.reason);
  }
}

void ModelRepository::LoadAll() {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  Table scanned = Scan();
  {
    absl::MutexLock write_lock(&write_mu_);
    Publish(std::make_shared<const Table>(scanned));
  }
  spdlog::info("model repository {}: {} model(s) found", options_.root, scanned.size());
  for (auto& [name, entry] : scanned) {
    if (entry.status.state != ModelState::kLoading) {
      spdlog::error("model '{}' unavailable: {}", name, entry.status.reason);
      continue;
    }
    LoadEntry(name, entry);
    Update(name, std::move(entry));
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

absl::Status ModelRepository::Load(absl::string_view name_view) {
  RETURN_IF_ERROR(CheckName(name_view));
  const std::string name(name_view);
  std::error_code ec;
  if (!fs::is_directory(fs::path(options_.root) / name, ec)) {
    return absl::NotFoundError(
        absl::StrCat("model '", name, "' is not in the repository ", options_.root));
  }
  absl::MutexLock lifecycle(&lifecycle_mu_);
  std::shared_ptr<const Model> old;
  ModelStatus old_status;
  {
    std::shared_ptr<const Table> table = Snapshot();
    auto it = table->find(name);
    if (it != table->end() && it->second.status.state == ModelState::kReady) {
      old = it->second.model;
      old_status = it->second.status;
    }
  }
  Entry entry = ScanOne(name);
  if (entry.status.state != ModelState::kLoading) {
    if (old == nullptr) Update(name, entry);
    return absl::UnavailableError(entry.status.reason);
  }
  if (old == nullptr) Update(name, entry);  // LOADING, visible in the index
  LoadEntry(name, entry);
  if (entry.model == nullptr) {
    const std::string reason = entry.status.reason;
    if (old == nullptr) Update(name, std::move(entry));
    return absl::UnavailableError(reason);
  }
  Update(name, std::move(entry));
  // Requests that looked the old version up before the swap either enqueued
  // already (Stop drains them) or find it stopped and look the model up again.
  if (old != nullptr) old->Stop();
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
  if (entry.model == nullptr) return absl::OkStatus();
  entry.status.state = ModelState::kUnloading;
  entry.status.reason = "unloading";
  Update(name, entry);
  entry.model->Stop();
  entry.model.reset();
  entry.status.state = ModelState::kUnavailable;
  entry.status.reason = "unloaded";
  Update(name, std::move(entry));
  spdlog::info("model '{}' unloaded", name);
  return absl::OkStatus();
}

void ModelRepository::DiscoverOnly() {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  Table scanned = Scan();
  for (auto& [name, entry] : scanned) {
    if (entry.status.state == ModelState::kLoading) {
      entry.status.state = ModelState::kUnavailable;
      entry.status.reason = "not loaded (load_mode explicit)";
    }
  }
  absl::MutexLock write_lock(&write_mu_);
  Publish(std::make_shared<const Table>(std::move(scanned)));
}

absl::StatusOr<std::shared_ptr<const Model>> ModelRepository::GetReady(
    absl::string_view name, absl::string_view version) const {
  std::shared_ptr<const Table> table = Snapshot();
  auto it = table->find(name);
  if (it == table->end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
  }
  const Entry& entry = it->second;
  if (!version.empty() && version != entry.status.version) {
    return absl::NotFoundError(absl::StrCat("model '", name, "' has no version '", version,
                                            "' (served: '", entry.status.version, "')"));
  }
  if (entry.status.state != ModelState::kReady || entry.model == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("model '", name, "' is ", ModelStateName(entry.status.state),
                     entry.status.reason.empty() ? "" : ": ", entry.status.reason));
  }
  return entry.model;
}

absl::StatusOr<ModelStatus> ModelRepository::GetStatus(absl::string_view name) const {
  std::shared_ptr<const Table> table = Snapshot();
  auto it = table->find(name);
  if (it == table->end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
  }
  return it->second.status;
}

std::vector<ModelStatus> ModelRepository::Index() const {
  std::shared_ptr<const Table> table = Snapshot();
  std::vector<ModelStatus> index;
  index.reserve(table->size());
  for (const auto& [name, entry] : *table) index.push_back(entry.status);
  return index;
}

std::vector<std::shared_ptr<const Model>> ModelRepository::LoadedModels() const {
  std::shared_ptr<const Table> table = Snapshot();
  std::vector<std::shared_ptr<const Model>> models;
  for (const auto& [name, entry] : *table) {
    if (entry.model != nullptr) models.push_back(entry.model);
  }
  return models;
}

void ModelRepository::UnloadAll() {
  absl::MutexLock lifecycle(&lifecycle_mu_);
  absl::MutexLock write_lock(&write_mu_);
  auto unloading = std::make_shared<Table>(*Snapshot());
  for (auto& [name, entry] : *unloading) {
    if (entry.model != nullptr) {
      entry.status.state = ModelState::kUnloading;
    }
  }
  Publish(unloading);
  for (auto& [name, entry] : *unloading) {
    if (entry.model != nullptr) entry.model->Stop();
  }
  auto done = std::make_shared<Table>(*unloading);
  for (auto& [name, entry] : *done) {
    if (entry.model == nullptr) continue;
    entry.model.reset();
    entry.status.state = ModelState::kUnavailable;
    entry.status.reason = "unloaded";
  }
  Publish(std::move(done));
}

}  // namespace onyx::server
