#!/usr/bin/env bash
# Serving benchmark: onyxd over loopback gRPC (dynamic batching, batch 1 per
# request, concurrency 1/8/64; then mlp requests of 16 and 64 rows at
# concurrency 64) vs the in-process engine on the same bucket sessions at the
# same batch sizes, and the empty unary call, side by side in one run (~5 minutes).
#   bash bench/serving/run.sh [BUILD_DIR] [SECONDS_PER_RUN]
# Needs: a Debian 12 build environment (scripts/install-deps.sh), python3-onnx.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
seconds=${2:-5}
[ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j2 --target onyxd onyx_serving_bench onyx-load >/dev/null
models=$build/serving_models
/usr/bin/python3 "$root/bench/serving/gen_models.py" "$models"
echo "machine: $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)"
/usr/bin/python3 "$root/bench/serving/run_matrix.py" --onyxd "$build/onyxd" \
  --bench "$build/bench/onyx_serving_bench" --onyx-load "$build/onyx-load" --proto-dir "$root/proto" --repo "$models" \
  --seconds "$seconds" --json "$build/serving_results.json"
