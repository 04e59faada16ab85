#include "server/models/override_files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;

constexpr char kPrefix[] = "onyx-load-";
constexpr char kLockFile[] = ".lock";

// The directory and the descriptor that holds its lock.
struct OwnedDirectory {
  std::string path;
  int lock_fd = -1;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const std::string>> WriteOverrideFiles(
    const std::map<std::string, std::string>& files) {
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / (std::string(kPrefix) + "XXXXXX")).string();
  if (ec || mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError("cannot create a temporary directory for the model files");
  }
  auto* owned = new OwnedDirectory{pattern, -1};
  // The lock first: from here on the directory is never taken for stale.
  owned->lock_fd =
      open((fs::path(pattern) / kLockFile).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (owned->lock_fd >= 0) flock(owned->lock_fd, LOCK_EX);
  std::shared_ptr<OwnedDirectory> holder(owned, [](OwnedDirectory* d) {
    std::error_code ignored;
    fs::remove_all(d->path, ignored);
    if (d->lock_fd >= 0) close(d->lock_fd);  // after the removal: never stale while it exists
    delete d;
  });
  if (owned->lock_fd < 0)
    return absl::InternalError("cannot create the lock file of the model files");
  for (const auto& [path, bytes] : files) {
    const fs::path target = fs::path(owned->path) / path;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (ec || !out.good()) {
      return absl::InternalError(absl::StrCat("cannot write the model file ", path));
    }
  }
  // The path, keeping the directory (and its lock) alive.
  return std::shared_ptr<const std::string>(holder, &holder->path);
}

int RemoveStaleOverrideDirectories() {
  std::error_code ec;
  const fs::path temp = fs::temp_directory_path(ec);
  if (ec) return 0;
  int removed = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(temp, ec)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, kPrefix) || !entry.is_directory(ec) || entry.is_symlink(ec))
      continue;
    const int fd = open((entry.path() / kLockFile).c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;  // no lock file: not one of ours, or not yet locked
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::error_code ignored;
      if (fs::remove_all(entry.path(), ignored) > 0) ++removed;
    }
    close(fd);
  }
  return removed;
}

}  // namespace onyx::server
