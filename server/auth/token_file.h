// TokenFile: a token file (TokenSet format) kept current while onyxd runs.
//
//   ASSIGN_OR_RETURN(auto file, TokenFile::Open("/etc/onyx/inference.tokens",
//                                               "inference_token_file"));
//   std::shared_ptr<const TokenSet> tokens = file->tokens();   // a snapshot
//   absl::StatusOr<bool> changed = file->ReloadIfChanged();    // from a poller
//
// Open() reads the file once; an unreadable file, a line that is not a token or
// a file without any token is INVALID_ARGUMENT naming `key` and the path.
// ReloadIfChanged() stats the file and re-reads it when its identity (inode,
// size, modification or change time) differs from the last read, which also
// catches the atomic rename editors and Kubernetes secret volumes use. A
// changed file that cannot be read or parsed keeps the tokens in force (an
// operator's typo must not lock every client out) and returns the error; a
// readable file with no tokens left is applied: every token is revoked.
// No message ever contains a token.
// Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/auth/token_set.h"

namespace onyx::server {

class TokenFile {
 public:
  static absl::StatusOr<std::unique_ptr<TokenFile>> Open(const std::string& path,
                                                         absl::string_view key);

  // The tokens in force; the snapshot stays valid after a reload.
  std::shared_ptr<const TokenSet> tokens() const;

  // True when the file changed and its new tokens are in force; false when it
  // is unchanged; an error (old tokens kept) when it changed but cannot be used.
  absl::StatusOr<bool> ReloadIfChanged();

  const std::string& path() const { return path_; }

 private:
  // What identifies one version of the file.
  struct Identity {
    long long inode = -1, size = -1, mtime_ns = -1, ctime_ns = -1;
    bool operator==(const Identity& o) const {
      return inode == o.inode && size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns;
    }
  };
  TokenFile(std::string path, std::string key) : path_(std::move(path)), key_(std::move(key)) {}
  absl::StatusOr<Identity> Stat() const;
  // Reads and parses the file as it is now.
  absl::StatusOr<TokenSet> Read() const;

  const std::string path_;
  const std::string key_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const TokenSet> tokens_ ABSL_GUARDED_BY(mu_);
  Identity identity_ ABSL_GUARDED_BY(mu_);
  // A changed version that could not be used, and whether the file's absence
  // was reported: each problem is reported once, not at every poll.
  std::optional<Identity> rejected_ ABSL_GUARDED_BY(mu_);
  bool missing_reported_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace onyx::server
