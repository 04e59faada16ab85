#!/usr/bin/env bash
# A/B of two onyxd builds on the serving benchmark's mlp, alternating rounds so
# that machine noise hits both alike. Each round starts one build, measures the
# empty unary call at C=1, served mlp at C=1 (P50) and at C=64 (rows/s), and
# stops it.
#   bash bench/serving/ab_onyxd.sh ONYXD_A ONYXD_B [ROUNDS (3)] [BUILD_DIR]
# BUILD_DIR holds onyx_serving_bench and the repository of run.sh
# (serving_models); both are made when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
a=$1 b=$2 rounds=${3:-3} build=${4:-$root/build}
bench=$build/bench/onyx_serving_bench
models=$build/serving_models
[ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j2 --target onyx_serving_bench >/dev/null
[ -d "$models/mlp" ] || /usr/bin/python3 "$root/bench/serving/gen_models.py" "$models" >/dev/null
port=${ONYX_AB_PORT:-18600}
field() { grep -o "\"$1\":[0-9.]*" | cut -d: -f2; }
round() {
  local onyxd=$1 label=$2 log
  log=$(mktemp)
  "$onyxd" --model-repository "$models" --grpc-address "127.0.0.1:$port" --metrics-address '' >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 150); do
    "$bench" empty --address "127.0.0.1:$port" --seconds 0.1 --warmup 0 >/dev/null 2>&1 && break
    sleep 0.2
  done
  sleep 1.5  # let warm-up finish
  local empty served c64
  empty=$("$bench" empty --address "127.0.0.1:$port" --seconds 2 --warmup 0.3 | field p50_us)
  served=$("$bench" served --address "127.0.0.1:$port" --model mlp --concurrency 1 --seconds 2 --warmup 0.3 |
           field p50_us)
  c64=$("$bench" served --address "127.0.0.1:$port" --model mlp --concurrency 64 --seconds 2 --warmup 0.3 |
        field rows_per_s)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$log"
  echo "$label: empty P50 $empty µs, served mlp C=1 P50 $served µs (served − empty $(awk -v s="$served" -v e="$empty" 'BEGIN { printf "%.1f", s - e }') µs), mlp C=64 $c64 rows/s"
}
for _ in $(seq "$rounds"); do
  round "$a" A
  round "$b" B
done
