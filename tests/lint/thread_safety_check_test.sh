#!/usr/bin/env bash
# thread_safety_check_test.sh: scripts/check_thread_safety.sh, run on a scratch
# tree, fails on a guarded member read without its mutex in a header that a
# source reaches only through another header; parses the sources that reach a
# lock annotation and skips the one that reaches none (ALL=1 parses it too);
# and passes once the lock is taken.
set -euo pipefail

clangxx=${CLANGXX:-clang++}
if ! command -v "$clangxx" >/dev/null; then
  echo "thread_safety_check_test: '$clangxx' not found (scripts/install-deps.sh installs clang)" >&2
  exit 1
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "thread_safety_check_test: $*" >&2
  exit 1
}

# The script finds the source tree from its own place: give it a copy.
mkdir -p "$scratch/scripts" "$scratch/lib/sync" "$scratch/app" "$scratch/build"
cp "$(cd "$(dirname "$0")/../.." && pwd)/scripts/check_thread_safety.sh" "$scratch/scripts/"

cat >"$scratch/lib/sync/counter.h" <<'EOF'
#include "absl/synchronization/mutex.h"
class Counter {
 public:
  int Peek() {
    // lock here
    return value_;
  }
 private:
  absl::Mutex mu_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};
EOF
cat >"$scratch/lib/wrapper.h" <<'EOF'
#include "sync/counter.h"
inline int Twice(Counter& c) { return 2 * c.Peek(); }
EOF
cat >"$scratch/app/user.cc" <<'EOF'
#include "wrapper.h"
int Use(Counter& c) { return Twice(c); }
EOF
cat >"$scratch/app/plain.cc" <<'EOF'
#include <vector>
int Sum(const std::vector<int>& v) { int s = 0; for (int x : v) s += x; return s; }
EOF
entries=()
for source in user plain; do
  entries+=("{\"directory\": \"$scratch/build\", \"file\": \"../app/$source.cc\",
    \"command\": \"c++ -std=c++20 -I$scratch/lib -O2 -Wall -o $source.o -c ../app/$source.cc\"}")
done
(IFS=,; echo "[${entries[*]}]") >"$scratch/build/compile_commands.json"

set +e
out=$(CLANGXX=$clangxx bash "$scratch/scripts/check_thread_safety.sh" "$scratch/build" 2>&1)
status=$?
set -e
[ "$status" -eq 1 ] || fail "unguarded read: exit $status, expected 1: $out"
grep -q "== app/user.cc" <<<"$out" || fail "unguarded read: app/user.cc not named: $out"
grep -q "reading variable 'value_' requires holding mutex 'mu_'" <<<"$out" ||
  fail "unguarded read: no thread-safety diagnostic: $out"
grep -q "1 of 1 files failed" <<<"$out" || fail "plain.cc was parsed or user.cc missed: $out"

sed -i 's|// lock here|absl::MutexLock lock(\&mu_);|' "$scratch/lib/sync/counter.h"
out=$(CLANGXX=$clangxx bash "$scratch/scripts/check_thread_safety.sh" "$scratch/build" 2>&1) ||
  fail "lock taken: the check still fails: $out"
grep -q "1 files clean.*; 1 without a lock annotation" <<<"$out" ||
  fail "lock taken: expected user.cc parsed and plain.cc skipped: $out"
out=$(ALL=1 CLANGXX=$clangxx bash "$scratch/scripts/check_thread_safety.sh" "$scratch/build" 2>&1) ||
  fail "ALL=1: the check fails: $out"
grep -q "2 files clean.*; 0 without" <<<"$out" || fail "ALL=1: expected both files parsed: $out"
echo "thread_safety_check_test: passed"
