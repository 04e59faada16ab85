// The model repository's layout, resolved: which names are models, which of a
// model's directories are versions, which versions its version_policy serves,
// and whether each resolves (symlinks followed) inside the repository root.
//
//   <root>/<model>/config.yaml              optional (model_config.h)
//   <root>/<model>/<version>/model.onnx     <version>: ParseModelVersion
//
//   RETURN_IF_ERROR(CheckModelName(root, "mlp"));
//   RETURN_IF_ERROR(CheckInsideRoot(dir, root, "model 'mlp': directory"));
//   VersionResolution resolution =
//       ResolveVersions(VersionSource{"mlp", dir, root, dir.string()}, policy);
//   for (const std::string& line : resolution.ignored) spdlog::warn("{}", line);
//   ASSIGN_OR_RETURN(std::vector<ResolvedVersion> versions, std::move(resolution.versions));
//
// These functions read the file system and nothing else: no logging, no
// repository state. ModelRepository decides what the results mean for the
// models it serves. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/config/model_config.h"

namespace onyx::server {

// The file each version directory holds.
inline constexpr char kModelFileName[] = "model.onnx";

// A version as written in a directory name, a "file:<version>/model.onnx" key
// or a request: a positive decimal integer without leading zeros (or sign)
// that fits int64 ("7"; not "07", "0", "+7" or 2^63). INVALID_ARGUMENT saying
// why otherwise.
absl::StatusOr<int64_t> ParseModelVersion(absl::string_view text);

// OK when `name` is a plain directory name whose <root>/<name> resolves
// (symlinks followed) to a direct child of root, existing or not.
// INVALID_ARGUMENT "model name '<name>' is outside the repository" for an
// empty name, one starting with '.', holding '/', '\\' or NUL, or resolving
// elsewhere.
absl::Status CheckModelName(const std::filesystem::path& root, absl::string_view name);

// OK when `path` resolves (symlinks followed, missing trailing parts allowed)
// inside `root`, itself resolved. UNAVAILABLE "<what> <path> resolves to
// <resolved>, outside the repository root <root> (refused)" otherwise, or
// naming the path that could not be resolved.
absl::Status CheckInsideRoot(const std::filesystem::path& path, const std::filesystem::path& root,
                             absl::string_view what);

// The version of a RepositoryModelLoad file key "<version>/model.onnx";
// INVALID_ARGUMENT naming the parameter and the expected form for anything
// else (which rules out "..", absolute paths and other file names).
absl::StatusOr<int64_t> FileOverrideVersion(const std::string& key);

// Where one model's version directories are.
struct VersionSource {
  std::string model;           // named in every reason
  std::filesystem::path dir;   // holds the <version>/ directories
  std::filesystem::path root;  // every version directory and model file must resolve inside
  std::string where;           // names `dir` when no version is selected
};

// One version the policy selects.
struct ResolvedVersion {
  int64_t version = 0;
  // <dir>/<version>/model.onnx, or UNAVAILABLE naming the model and version:
  // the policy names a version with no directory, or its directory or model
  // file resolves outside `root`. The model file need not exist.
  absl::StatusOr<std::string> model_path;
};

struct VersionResolution {
  // One "ignoring version directory <path>: <why>" per all-digit directory
  // name that is not a version ("01", "0", past int64), in name order, for
  // the log; other names (not all digits, or files) are not versions and not
  // listed.
  std::vector<std::string> ignored;
  // The versions `policy` selects from the version directories, ascending
  // (kSpecific: the listed versions, on disk or not). UNAVAILABLE
  // "model '<model>': no numeric version directory in <where>" when it
  // selects none.
  absl::StatusOr<std::vector<ResolvedVersion>> versions;
};

VersionResolution ResolveVersions(const VersionSource& source, const VersionPolicy& policy);

}  // namespace onyx::server
