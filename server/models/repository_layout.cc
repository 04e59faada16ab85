#include "server/models/repository_layout.h"

#include <algorithm>
#include <limits>
#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onyx::server {

namespace fs = std::filesystem;

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

absl::Status CheckModelName(const fs::path& root, absl::string_view name) {
  const auto outside = [name] {
    return absl::InvalidArgumentError(
        absl::StrCat("model name '", name, "' is outside the repository"));
  };
  if (name.empty() || name[0] == '.' || name.find('/') != absl::string_view::npos ||
      name.find('\\') != absl::string_view::npos || name.find('\0') != absl::string_view::npos) {
    return outside();
  }
  std::error_code ec;
  const fs::path resolved_root = fs::weakly_canonical(root, ec);
  const fs::path resolved = fs::weakly_canonical(root / std::string(name), ec);
  if (ec || resolved.parent_path() != resolved_root) return outside();
  return absl::OkStatus();
}

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
                                               resolved.string(), ", outside the repository root ",
                                               resolved_root.string(), " (refused)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> FileOverrideVersion(const std::string& key) {
  const std::vector<std::string> parts = absl::StrSplit(key, '/');
  absl::StatusOr<int64_t> version = absl::InvalidArgumentError("not '<version>/model.onnx'");
  if (parts.size() == 2 && parts[1] == kModelFileName) version = ParseModelVersion(parts[0]);
  if (!version.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("RepositoryModelLoad parameter 'file:", key,
                     "': expected 'file:<version>/model.onnx' with a version number "
                     "(a positive decimal integer without leading zeros): ",
                     version.status().message()));
  }
  return version;
}

namespace {

// The model file of version directory `name` under source.dir, or why it is
// refused: the directory or the file resolves outside source.root.
absl::StatusOr<std::string> ContainedModelFile(const VersionSource& source, int64_t version,
                                               const std::string& name) {
  const fs::path version_dir = source.dir / name;
  const fs::path model_file = version_dir / kModelFileName;
  const std::string what = absl::StrCat("model '", source.model, "' version ", version, ":");
  absl::Status inside =
      CheckInsideRoot(version_dir, source.root, absl::StrCat(what, " version directory"));
  if (inside.ok()) {
    inside = CheckInsideRoot(model_file, source.root, absl::StrCat(what, " model file"));
  }
  if (!inside.ok()) return inside;
  return model_file.string();
}

}  // namespace

VersionResolution ResolveVersions(const VersionSource& source, const VersionPolicy& policy) {
  VersionResolution resolution;
  // version -> directory name, for the canonical names only.
  std::map<int64_t, std::string> directories;
  std::map<std::string, std::string> ignored;  // directory name -> log line
  std::error_code ec;
  for (const fs::directory_entry& sub : fs::directory_iterator(source.dir, ec)) {
    const std::string name = sub.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos ||
        !sub.is_directory(ec)) {
      continue;
    }
    absl::StatusOr<int64_t> version = ParseModelVersion(name);
    if (!version.ok()) {
      ignored[name] = absl::StrCat("ignoring version directory ", sub.path().string(), ": ",
                                   version.status().message());
      continue;
    }
    directories.emplace(*version, name);
  }
  for (auto& [name, line] : ignored) resolution.ignored.push_back(std::move(line));

  std::vector<int64_t> available;
  for (const auto& [version, unused] : directories) available.push_back(version);
  const std::vector<int64_t> selected = SelectVersions(policy, std::move(available));
  if (selected.empty()) {
    resolution.versions = absl::UnavailableError(
        absl::StrCat("model '", source.model, "': no numeric version directory in ", source.where));
    return resolution;
  }
  std::vector<ResolvedVersion> versions;
  for (int64_t version : selected) {
    ResolvedVersion& resolved = versions.emplace_back();
    resolved.version = version;
    auto directory = directories.find(version);
    if (directory == directories.end()) {
      resolved.model_path = absl::UnavailableError(
          absl::StrCat("model '", source.model, "' version ", version,
                       ": version_policy selects it but there is no version directory ",
                       (source.dir / absl::StrCat(version)).string()));
    } else {
      resolved.model_path = ContainedModelFile(source, version, directory->second);
    }
  }
  resolution.versions = std::move(versions);
  return resolution;
}

}  // namespace onyx::server
