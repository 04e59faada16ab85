#!/bin/sh
# Regenerates the committed com.microsoft contrib-operator cases (cases/) and
# ort_refused.txt: gen_cases.py writes models and inputs, record_ort.js records
# ONNX Runtime's outputs (dropping the cases it refuses), gen_cases.py
# --set-output-shapes declares the recorded output shapes. See ../README.md.
#
#   tests/conformance/contrib_ops/regenerate.sh [NODE_MODULES_DIR]
#
# NODE_MODULES_DIR holds onnxruntime-node 1.30.0 (default: $ORT_NODE_MODULES,
# else ~/.cache/onyx/compare_ort/ort_peer/node_modules); install it with
#   npm install --prefix DIR onnxruntime-node@1.30.0 --onnxruntime-node-install=skip
# and pass DIR/node_modules.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-/usr/bin/python3}
node_modules=${1:-${ORT_NODE_MODULES:-$HOME/.cache/onyx/compare_ort/ort_peer/node_modules}}
if [ ! -d "$node_modules/onnxruntime-node" ]; then
  echo "regenerate.sh: no onnxruntime-node in $node_modules; install it with" >&2
  echo "  npm install --prefix DIR onnxruntime-node@1.30.0 --onnxruntime-node-install=skip" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" "$here/gen_cases.py" "$tmp/cases"
node "$here/../record_ort.js" "$tmp/cases" "$node_modules" "$here/ort_refused.txt"
"$python" "$here/gen_cases.py" --set-output-shapes "$tmp/cases"
rm -rf "$here/cases"
mv "$tmp/cases" "$here/cases"
