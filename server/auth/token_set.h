// TokenSet: the bearer tokens of one token file, compared in constant time.
//
//   ASSIGN_OR_RETURN(TokenSet tokens, TokenSet::Parse(file_text, "/etc/onyx/inference.tokens"));
//   if (tokens.Contains(presented)) { ... }
//
// File format: one token per line; leading and trailing spaces and tabs are
// trimmed; blank lines and lines starting with '#' are ignored. A token is
// printable ASCII without spaces (0x21..0x7e: it travels in an HTTP/2 header).
// Error messages name the source and the line number, never a line's text, so
// a mistyped token cannot leak into a log.
// Immutable after Parse: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onyx::server {

// True when `a` equals `b`. Its running time depends only on the length of
// `a` (pass the secret there), not on `b` nor on where the strings differ, so
// a client timing its attempts learns nothing about a token's bytes.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

class TokenSet {
 public:
  TokenSet() = default;

  // INVALID_ARGUMENT naming `source` and the line for a line that is not a
  // token. An empty set (only comments) is valid here; callers decide.
  static absl::StatusOr<TokenSet> Parse(absl::string_view text, absl::string_view source);

  // Compares `token` with every token of the set (no early exit), each in
  // constant time: the time taken does not tell which token matched, or how
  // much of one.
  bool Contains(absl::string_view token) const;

  size_t size() const { return tokens_.size(); }
  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<std::string> tokens_;  // deduplicated
};

}  // namespace onyx::server
