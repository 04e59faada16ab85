#!/bin/sh
# Regenerates the committed cases (cases/) and ort_refused.txt of one suite
# whose expected outputs are ONNX Runtime's (new_opsets, contrib_ops):
# SUITE/gen_cases.py writes models and inputs, record_ort.js records ONNX
# Runtime's outputs (dropping the cases it refuses), SUITE/gen_cases.py
# --set-output-shapes declares the recorded output shapes. See README.md.
#
#   tests/conformance/regenerate_ort_cases.sh SUITE [NODE_MODULES_DIR]
#
# SUITE is new_opsets or contrib_ops. NODE_MODULES_DIR holds onnxruntime-node
# 1.30.0 (default: $ORT_NODE_MODULES, else
# ~/.cache/onyx/compare_ort/ort_peer/node_modules); install it with
#   npm install --prefix DIR onnxruntime-node@1.30.0 --onnxruntime-node-install=skip
# and pass DIR/node_modules.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || [ ! -f "$here/${1:-}/gen_cases.py" ]; then
  echo "regenerate_ort_cases.sh: SUITE must be a folder of $here with a gen_cases.py (new_opsets or contrib_ops); got '${1:-}'" >&2
  exit 2
fi
suite=$here/$1
python=${PYTHON:-/usr/bin/python3}
node_modules=${2:-${ORT_NODE_MODULES:-$HOME/.cache/onyx/compare_ort/ort_peer/node_modules}}
if [ ! -d "$node_modules/onnxruntime-node" ]; then
  echo "regenerate_ort_cases.sh: no onnxruntime-node in $node_modules; install it with" >&2
  echo "  npm install --prefix DIR onnxruntime-node@1.30.0 --onnxruntime-node-install=skip" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" "$suite/gen_cases.py" "$tmp/cases"
node "$here/record_ort.js" "$tmp/cases" "$node_modules" "$suite/ort_refused.txt"
"$python" "$suite/gen_cases.py" --set-output-shapes "$tmp/cases"
rm -rf "$suite/cases"
mv "$tmp/cases" "$suite/cases"
