// The private directories that hold a RepositoryModelLoad's `file:` contents
// while the model they describe is loaded.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<const std::string> dir, WriteOverrideFiles(files));
//   ... load the model from *dir ...   // removed when the last copy of `dir` goes
//   RemoveStaleOverrideDirectories();  // at start-up: what a killed onyxd left
//
// Each directory is <temp dir>/onyx-load-XXXXXX (TMPDIR, else /tmp) and holds
// a `.lock` file that its process keeps locked (flock) while the directory
// lives: a process that dies, even by SIGKILL, releases the lock, so a later
// onyxd — same host, same temp dir, any pid (pid 1 again in a container) —
// can tell the directories nobody owns from those of a running onyxd.
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace onyx::server {

// Writes `files` (relative path → bytes; paths already checked by the caller)
// into a fresh private directory, removed with its contents when the last
// copy of the returned pointer goes. INTERNAL naming the file when one cannot
// be written.
absl::StatusOr<std::shared_ptr<const std::string>> WriteOverrideFiles(
    const std::map<std::string, std::string>& files);

// Removes every onyx-load-* directory in the temp dir whose `.lock` no live
// process holds; returns how many it removed. Directories without a lock
// file are left alone.
int RemoveStaleOverrideDirectories();

}  // namespace onyx::server
