#include "server/auth/token_file.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"

namespace onyx::server {
namespace {

long long Nanos(const timespec& t) {
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenFile>> TokenFile::Open(const std::string& path,
                                                           absl::string_view key) {
  std::unique_ptr<TokenFile> file(new TokenFile(path, std::string(key)));
  ASSIGN_OR_RETURN(Identity identity, file->Stat());
  ASSIGN_OR_RETURN(TokenSet tokens, file->Read());
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": '", path,
                     "' holds no token (expected at least one line with a token; blank lines "
                     "and '#' comments do not count)"));
  }
  absl::MutexLock lock(&file->mu_);
  file->identity_ = identity;
  file->tokens_ = std::make_shared<const TokenSet>(std::move(tokens));
  return file;
}

std::shared_ptr<const TokenSet> TokenFile::tokens() const {
  absl::MutexLock lock(&mu_);
  return tokens_;
}

absl::StatusOr<TokenFile::Identity> TokenFile::Stat() const {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    const int error = errno;
    return absl::InvalidArgumentError(absl::StrCat(key_, ": cannot read '", path_, "' (",
                                                   strerror(error),
                                                   "); expected a readable token file"));
  }
  Identity identity;
  identity.inode = static_cast<long long>(st.st_ino);
  identity.size = static_cast<long long>(st.st_size);
  identity.mtime_ns = Nanos(st.st_mtim);
  identity.ctime_ns = Nanos(st.st_ctim);
  return identity;
}

absl::StatusOr<TokenSet> TokenFile::Read() const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(key_, ": cannot read '", path_, "' (expected a readable token file)"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return TokenSet::Parse(text.str(), absl::StrCat(key_, ": '", path_, "'"));
}

absl::StatusOr<bool> TokenFile::ReloadIfChanged() {
  absl::StatusOr<Identity> identity = Stat();
  {
    absl::MutexLock lock(&mu_);
    if (!identity.ok()) {
      if (missing_reported_) return false;
      missing_reported_ = true;
      return identity.status();
    }
    missing_reported_ = false;
    if (*identity == identity_ || rejected_ == *identity) return false;
  }
  absl::StatusOr<TokenSet> tokens = Read();
  absl::MutexLock lock(&mu_);
  if (!tokens.ok()) {
    rejected_ = *identity;
    return tokens.status();
  }
  identity_ = *identity;
  rejected_.reset();
  tokens_ = std::make_shared<const TokenSet>(*std::move(tokens));
  return true;
}

}  // namespace onyx::server
