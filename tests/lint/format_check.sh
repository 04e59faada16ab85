#!/usr/bin/env bash
# format_check.sh [ROOT]: fails when a C++ file that changed since the baseline
# commit is not formatted as ROOT/.clang-format says (clang-format 14, as
# Debian 12 ships it: other versions format differently).
#
# A fresh CI clone has no upstream branch to diff against, so the baseline is
# recorded in the repository: tests/lint/format_baseline holds the last commit
# before .clang-format existed. Every .cc/.h/.cpp/.hpp/.cu/.cuh file added or
# modified since then (committed, staged, unstaged, or untracked and not
# ignored) and still on disk must be clean; files nobody has touched since are
# left as they are. A renamed file counts as added. A clone too shallow to
# hold the baseline fails with a message saying so; outside a git checkout the
# check is skipped (exit 77).
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format_check: $root is not a git checkout; nothing to compare with (skipped)"
  exit 77
fi
if [ ! -f .clang-format ]; then
  echo "format_check: no .clang-format in $root" >&2
  exit 1
fi

clang_format=""
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null && "$candidate" --version | grep -q 'version 14\.'; then
    clang_format=$candidate
    break
  fi
done
if [ -z "$clang_format" ]; then
  echo "format_check: clang-format 14 not found (bash scripts/install-deps.sh installs clang-format-14)" >&2
  exit 1
fi

baseline_file=tests/lint/format_baseline
baseline=$(grep -v '^#' "$baseline_file" | tr -d '[:space:]')
if ! git cat-file -e "${baseline}^{commit}" 2>/dev/null; then
  echo "format_check: baseline commit $baseline (from $baseline_file) is not in this clone;" \
       "fetch the full history (git fetch --unshallow) or a depth that reaches it" >&2
  exit 1
fi

cxx=('*.cc' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
mapfile -t files < <({
  git diff --name-only --no-renames --diff-filter=AM "$baseline" -- "${cxx[@]}"
  git ls-files --others --exclude-standard -- "${cxx[@]}"
} | sort -u)

# One clang-format per batch of files, two at a time, finds the unclean ones;
# only those are formatted again to show their diff.
present=()
for file in "${files[@]}"; do
  [ -f "$file" ] && present+=("$file")
done
checked=${#present[@]}
mapfile -t suspects < <(
  if [ "$checked" -gt 0 ]; then
    printf '%s\0' "${present[@]}" |
      xargs -0 -P 2 -n 40 "$clang_format" --style=file --dry-run 2>&1 |
      sed -n 's/^\(.*\):[0-9]*:[0-9]*: \(warning\|error\): code should be clang-formatted.*/\1/p' |
      sort -u
  fi)

unformatted=()
for file in "${suspects[@]}"; do
  if ! diff=$("$clang_format" --style=file "$file" | diff -u --label "$file" --label "$file (clang-format)" "$file" -); then
    changed=$(grep -c '^-[^-]' <<<"$diff" || true)
    unformatted+=("$file ($changed lines)")
    echo "$diff" | head -n 40
  fi
done

if [ ${#unformatted[@]} -gt 0 ]; then
  echo "format_check: ${#unformatted[@]} of $checked C++ files changed since ${baseline:0:12} are not" \
       "clang-format clean; run: $clang_format -i FILE"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "format_check: $checked C++ files changed since ${baseline:0:12}, all clang-format clean"
