#!/usr/bin/env bash
# file_size_check.sh [ROOT]: fails when a non-test C++ source file under ROOT
# (.cc or .h, not *_test.cc) is over 800 lines, naming each such file and its
# length. Build trees (build/, build-*/), hidden folders and other generated
# output are not sources and are skipped. STYLE.md asks for a median .cc of
# 100-250 lines and a split by concern past ~600; 800 is the hard stop.
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
limit=800

# "LINES PATH" for every source file, read by one awk (a newline-less last
# line counts too).
sizes=$(find . -mindepth 1 \
          -type d \( -name build -o -name 'build-*' -o -name '.*' -o -name node_modules -o -name __pycache__ \) -prune \
          -o -type f \( -name '*.cc' -o -name '*.h' \) ! -name '*_test.cc' -print0 |
        xargs -0 -r awk 'FNR == 1 && NR > 1 { print lines, file } { lines = FNR; file = FILENAME }
                         END { if (NR > 0) print lines, file }' |
        sed 's| \./| |' | sort -k1,1nr -k2)
over=()
while read -r lines file; do
  if [ -n "$lines" ] && [ "$lines" -gt "$limit" ]; then over+=("$file: $lines lines"); fi
done <<<"$sizes"
read -r largest_lines largest <<<"$sizes" || true

if [ ${#over[@]} -gt 0 ]; then
  echo "file_size_check: non-test source files over $limit lines (split them by concern):"
  printf '  %s\n' "${over[@]}"
  exit 1
fi
if [ -z "$largest" ]; then
  echo "file_size_check: no .cc or .h files under $root" >&2
  exit 1
fi
echo "file_size_check: every non-test source file is within $limit lines (largest: $largest, $largest_lines)"
