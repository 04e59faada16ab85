#!/usr/bin/env bash
# numeric_parse_check.sh [ROOT]: fails when a non-test C++ source under ROOT's
# engine/, providers/, server/, cli/, bench/ or loadtest/ calls an unchecked
# numeric parse: std::sto* (throws, and onyx has no exceptions of its own),
# ato* (no error at all), strto* (errors only through errno and an end
# pointer, easy to ignore) or the scanf family (no overflow check). Text from
# a model, a config file, a flag or the system goes through absl::SimpleAtoi /
# SimpleAtod (or std::from_chars) with a Status naming what was parsed.
#
# Tests (*_test.cc) are exempt: their input is their own. There is no
# allow-list, because nothing in the tree needs one; should something truly be
# unable to change, filter its exact line out of `hits` below, with a comment
# saying why.
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

pattern='\b(std::)?(sto(i|l|ll|ul|ull|f|d|ld)|ato(i|l|ll|f)|strto(l|ll|ul|ull|f|d|ld|imax|umax)|v?[sf]?scanf)[[:space:]]*\('

dirs=()
for d in engine providers server cli bench loadtest; do
  [ -d "$d" ] && dirs+=("$d")
done
if [ ${#dirs[@]} -eq 0 ]; then
  echo "numeric_parse_check: none of engine/ providers/ server/ cli/ bench/ loadtest/ under $root" >&2
  exit 1
fi

hits=$(grep -rnE "$pattern" "${dirs[@]}" \
         --include='*.cc' --include='*.h' --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' \
         --exclude='*_test.cc' || true)
if [ -n "$hits" ]; then
  echo "numeric_parse_check: unchecked numeric parse in non-test sources (use absl::SimpleAtoi/SimpleAtod"
  echo "or std::from_chars, and return a Status naming the tensor, key or flag and the received text):"
  echo "$hits"
  exit 1
fi
echo "numeric_parse_check: no unchecked numeric parse in ${dirs[*]}"
