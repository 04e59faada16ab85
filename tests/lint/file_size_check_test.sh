#!/usr/bin/env bash
# file_size_check_test.sh: file_size_check.sh fails on a scratch tree with a
# non-test source of 801 lines (and one of 900 whose last line has no newline),
# naming each with its length, ignores files of 800 lines, tests and build
# trees, and passes once the long files are gone.
set -euo pipefail

check=$(cd "$(dirname "$0")" && pwd)/file_size_check.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "file_size_check_test: $*" >&2
  exit 1
}
lines() { seq "$1" | sed 's/^/int line_/; s/$/;/'; }

mkdir -p "$scratch"/{engine/planner,server/models,build/proto,build-clang/engine,tests/util}
lines 801 >"$scratch/engine/planner/planner.cc"
lines 900 | head -c -1 >"$scratch/server/models/model repository.h"
lines 800 >"$scratch/engine/planner/lifetime.cc"
lines 2000 >"$scratch/engine/planner/planner_test.cc"
lines 2000 >"$scratch/build/proto/inference.pb.cc"
lines 2000 >"$scratch/build-clang/engine/generated.h"
lines 10 >"$scratch/tests/util/model_builder.cc"

set +e
out=$("$check" "$scratch" 2>&1)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "exit status $rc with files over 800 lines, want 1; output:
$out"
for want in "engine/planner/planner.cc: 801 lines" "server/models/model repository.h: 900 lines"; do
  grep -qF "$want" <<<"$out" || fail "output does not say '$want':
$out"
done
for unwanted in lifetime.cc planner_test.cc inference.pb.cc generated.h model_builder.cc; do
  if grep -qF "$unwanted" <<<"$out"; then
    fail "output names $unwanted, which is not over the limit or not a checked source:
$out"
  fi
done

rm "$scratch/engine/planner/planner.cc" "$scratch/server/models/model repository.h"
out=$("$check" "$scratch" 2>&1) || fail "fails with every source within 800 lines:
$out"
grep -qF "largest: engine/planner/lifetime.cc, 800" <<<"$out" || fail "does not report the largest file:
$out"
echo "file_size_check_test: passed"
