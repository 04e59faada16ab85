#!/usr/bin/env bash
# Memory benchmark: onyx vs ONNX Runtime 1.30 (CPU, onnxruntime-node) on the
# generated ResNet-50 and BERT-base-like models, side by side in one run.
#   bash bench/memory/run.sh [BUILD_DIR]
# Needs: the build (target onyx_memory_bench), python3-torch, node + npm.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
models=$build/bench_models
peer=$build/ort_peer
/usr/bin/python3 "$root/tests/models/gen_zoo_models.py" "$models" --large
if [ ! -d "$peer/node_modules/onnxruntime-node" ]; then
  mkdir -p "$peer"
  (cd "$peer" && npm install --silent onnxruntime-node@1.30.0 --onnxruntime-node-install=skip >/dev/null)
fi
for name in resnet50 bert_base; do
  dir=$models/$name
  /usr/bin/python3 - "$dir" <<'PY'
import json, sys, onnx
from onnx import numpy_helper
d = sys.argv[1]
t = onnx.load_tensor(f"{d}/test_data_set_0/input_0.pb")
a = numpy_helper.to_array(t)
a.tofile(f"{d}/input_0.bin")
json.dump({"name": t.name, "dtype": str(a.dtype), "dims": list(a.shape)}, open(f"{d}/input_0.json", "w"))
PY
  echo "== $name"
  "$build/bench/onyx_memory_bench" "$dir/model.onnx" "$dir/test_data_set_0/input_0.pb" --runs 20
  NODE_PATH=$peer/node_modules node "$root/bench/memory/ort_memory_bench.js" "$dir/model.onnx" \
    "$dir/input_0.bin" "$dir/input_0.json" --runs 20
done
echo "== resnet50, five bucket sessions (1,2,4,8,16) sharing weights, vs one session"
"$build/bench/onyx_memory_bench" "$models/resnet50/model.onnx" "$models/resnet50/test_data_set_0/input_0.pb" \
  --runs 3 --buckets 1,2,4,8,16
"$build/bench/onyx_memory_bench" "$models/resnet50/model.onnx" "$models/resnet50/test_data_set_0/input_0.pb" \
  --runs 3 --buckets 16
