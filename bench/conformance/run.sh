#!/usr/bin/env bash
# ONNX Runtime 1.30 (CPU, onnxruntime-node) on the same ONNX node-test cases
# that tests/conformance runs through onyx (tensor-only cases; ORT's Node API
# has no sequence or optional values), and the cases ORT passes but onyx fails.
#   bash bench/conformance/run.sh [BUILD_DIR]     (after `ctest -R onnx_conformance`)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
peer=$build/ort_peer
if [ ! -d "$peer/node_modules/onnxruntime-node" ]; then
  mkdir -p "$peer"
  (cd "$peer" && npm install --silent onnxruntime-node@1.30.0 --onnxruntime-node-install=skip >/dev/null)
fi
/usr/bin/python3 "$root/bench/conformance/export_cases.py" "$build/onnx_node_tests" "$build/ort_cases"
NODE_PATH=$peer/node_modules node "$root/bench/conformance/ort_node_tests.js" "$build/ort_cases" > "$build/ort_conformance.log"
tail -1 "$build/ort_conformance.log"
"$build/tests/conformance/conformance_runner" "$build/onnx_node_tests" --jobs 2 > "$build/onyx_conformance.log" || true
grep '^conformance:' "$build/onyx_conformance.log" | head -1
echo "cases onnxruntime passes and onyx fails:"
comm -12 <(grep '^PASS' "$build/ort_conformance.log" | awk '{print $2}' | sort) \
         <(grep '^FAIL' "$build/onyx_conformance.log" | awk '{print $2}' | tr -d ':' | sort) || true
