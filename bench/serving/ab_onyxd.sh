#!/usr/bin/env bash
# A/B of two onyxd builds on the serving benchmark's mlp, alternating rounds so
# that machine noise hits both alike. Each round starts one build, measures
# (with onyx-load, closed loop) the empty unary call at C=1, served mlp at C=1
# (P50) and at C=64 (rows/s), and stops it.
#   bash bench/serving/ab_onyxd.sh ONYXD_A ONYXD_B [ROUNDS (3)] [BUILD_DIR]
# BUILD_DIR holds onyx-load and the repository of run.sh (serving_models);
# both are made when missing. For whole runs side by side (percentile curves,
# sweeps), `onyx-load compare A.json B.json --html` (loadtest/README.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
a=$1 b=$2 rounds=${3:-3} build=${4:-$root/build}
load=$build/onyx-load
models=$build/serving_models
[ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j2 --target onyx-load >/dev/null
[ -d "$models/mlp" ] || /usr/bin/python3 "$root/bench/serving/gen_models.py" "$models" >/dev/null
port=${ONYX_AB_PORT:-18600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# measure WHAT ARGS...: one closed-loop onyx-load run; prints the P50 (µs) or rows/s.
measure() {
  local what=$1
  shift
  "$load" --quiet --target "127.0.0.1:$port" --duration 2s --warmup 0.3s --json "$work/run.json" "$@" >/dev/null
  /usr/bin/python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["levels"][0]["all"]
rows = int(sys.argv[3])
print("%.1f" % (m["response"]["percentiles_ns"]["p50"] / 1e3 if sys.argv[2] == "p50" else m["throughput"] * rows))' \
    "$work/run.json" "$what" "${ROWS:-1}"
}
round() {
  local onyxd=$1 label=$2 log
  log=$(mktemp)
  "$onyxd" --model-repository "$models" --grpc-address "127.0.0.1:$port" --metrics-address '' >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 150); do
    "$load" --quiet --target "127.0.0.1:$port" --empty --requests 1 --warmup 0s --connect-timeout 0.2s \
      >/dev/null 2>&1 && break
    sleep 0.2
  done
  sleep 1.5  # let warm-up finish
  local empty served c64
  empty=$(measure p50 --empty --concurrency 1)
  served=$(measure p50 --model mlp --concurrency 1)
  c64=$(measure rows --model mlp --concurrency 64)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$log"
  echo "$label: empty P50 $empty µs, served mlp C=1 P50 $served µs (served − empty $(awk -v s="$served" -v e="$empty" 'BEGIN { printf "%.1f", s - e }') µs), mlp C=64 $c64 rows/s"
}
for _ in $(seq "$rounds"); do
  round "$a" A
  round "$b" B
done
