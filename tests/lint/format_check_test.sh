#!/usr/bin/env bash
# format_check_test.sh: format_check.sh, run on a scratch git repository with
# the project's .clang-format, fails naming every C++ file added or modified
# since the recorded baseline that clang-format would change (committed,
# unstaged or untracked; a renamed file counts as added), leaves alone
# unformatted files untouched since the baseline, ignored files and non-C++
# files, and passes once the changed files are formatted. A baseline missing
# from the clone fails with a message; a tree without git is skipped (77).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
check=$here/format_check.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "format_check_test: $*" >&2
  exit 1
}
run_check() {
  set +e
  out=$("$check" "$1" 2>&1)
  rc=$?
  set -e
}

repo=$scratch/repo
mkdir -p "$repo"/{engine,cli,server,tests/lint}
cp "$here/../../.clang-format" "$repo/"
cd "$repo"
git init -q
git config user.email check@example.invalid
git config user.name "format check test"
bad='int  f( int a ){return a+1 ;}'
good='int f(int a) { return a + 1; }'
echo "$bad" >engine/old.cc         # unformatted, never touched again
echo "$good" >engine/kept.cc       # formatted, modified later (unstaged)
echo "$good" >engine/moved.cc      # renamed later
echo "$good" >engine/removed.cc    # deleted later
echo "build/" >.gitignore
git add -A
git commit -qm baseline
printf '# the baseline\n%s\n' "$(git rev-parse HEAD)" >tests/lint/format_baseline

echo "$bad" >engine/added.cc       # committed after the baseline
git mv engine/moved.cc server/moved.h
git add -A
git commit -qm "after the baseline"
echo "$bad" >>engine/kept.cc       # unstaged change
git rm -q engine/removed.cc
echo "$bad" >cli/untracked.h       # untracked, not ignored
mkdir -p build
echo "$bad" >build/ignored.cc      # ignored
echo "$bad" >engine/notes.txt      # not C++

run_check "$repo"
[ "$rc" -eq 1 ] || fail "exit status $rc with unformatted changed files, want 1; output:
$out"
for want in engine/added.cc engine/kept.cc cli/untracked.h; do
  grep -qE "^  $want \([0-9]+ lines\)$" <<<"$out" || fail "output does not list $want:
$out"
done
grep -qF "3 of 4 C++ files changed" <<<"$out" || fail "output does not count 3 of 4 checked files:
$out"
for unwanted in engine/old.cc build/ignored.cc notes.txt server/moved.h removed.cc; do
  if grep -qE "^  $unwanted" <<<"$out"; then
    fail "output lists $unwanted, which must not be flagged:
$out"
  fi
done

clang_format=clang-format-14
command -v "$clang_format" >/dev/null || clang_format=clang-format
"$clang_format" -i engine/added.cc engine/kept.cc cli/untracked.h
run_check "$repo"
[ "$rc" -eq 0 ] || fail "exit status $rc once the changed files are formatted, want 0; output:
$out"
grep -qF "4 C++ files changed" <<<"$out" || fail "output does not count the 4 checked files:
$out"

printf '%s\n' 0123456789abcdef0123456789abcdef01234567 >tests/lint/format_baseline
run_check "$repo"
[ "$rc" -eq 1 ] && grep -qF "is not in this clone" <<<"$out" ||
  fail "a baseline missing from the clone gives exit status $rc, want 1 with a message; output:
$out"

plain=$scratch/plain
mkdir -p "$plain/tests/lint"
cp "$repo/.clang-format" "$plain/"
cp "$repo/tests/lint/format_baseline" "$plain/tests/lint/"
run_check "$plain"
[ "$rc" -eq 77 ] || fail "exit status $rc outside a git checkout, want 77 (skipped); output:
$out"
echo "format_check_test: passed"
