#include "server/auth/token_set.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace onyx::server {

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Walks all of `a` whatever `b` holds; the optimiser may not turn the
  // accumulated difference into an early exit because it is only read at the
  // end, through a volatile.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = b.empty() ? 0 : b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    const unsigned char other = n == 0 ? 0 : static_cast<unsigned char>(b[i % n]);
    diff = diff | (static_cast<unsigned char>(a[i]) ^ other);
  }
  return diff == 0;
}

absl::StatusOr<TokenSet> TokenSet::Parse(absl::string_view text, absl::string_view source) {
  TokenSet set;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);  // also a Windows '\r'
    if (line.empty() || line.front() == '#') continue;
    for (size_t column = 0; column < line.size(); ++column) {
      const unsigned char c = static_cast<unsigned char>(line[column]);
      if (c < 0x21 || c > 0x7e) {
        return absl::InvalidArgumentError(absl::StrCat(
            source, ": line ", line_number,
            ": expected one token of printable ASCII without spaces (0x21..0x7e), received a "
            "character 0x",
            absl::Hex(c, absl::kZeroPad2), " at column ", column + 1));
      }
    }
    set.tokens_.emplace_back(line);
  }
  std::sort(set.tokens_.begin(), set.tokens_.end());
  set.tokens_.erase(std::unique(set.tokens_.begin(), set.tokens_.end()), set.tokens_.end());
  return set;
}

bool TokenSet::Contains(absl::string_view token) const {
  bool found = false;
  for (const std::string& candidate : tokens_) {
    // Non-short-circuit: every token is compared.
    found = ConstantTimeEquals(candidate, token) | found;
  }
  return found;
}

}  // namespace onyx::server
