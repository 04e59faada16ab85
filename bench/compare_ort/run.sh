#!/usr/bin/env bash
# onyx vs ONNX Runtime 1.30 (CPU, onnxruntime-node) on a model set of
# gen_models.py: median latency at each thread count and batch, session
# creation, peak RSS, output agreement; writes the set's section of
# bench/RESULTS.md.
#
#   bash bench/compare_ort/run.sh [flags]
#     --set cnn|sequence  the CNNs (default) or the transformer / recurrent / MLP set
#     --models a,b        subset of the set (default: all; gen_models.py --set S --list names them)
#     --threads 1,2       intra-op thread counts (default 1,2)
#     --batches 1,8       batch sizes (default 1,8)
#     --iterations K      timed runs per process (default 10)
#     --warmup K          untimed runs before them (default 2)
#     --rounds R          onyx/ORT process pairs per cell, each engine's best round reported (default 1)
#     --cpus LIST         CPUs to pin to, the first N for N threads (default: this process's)
#     --small             the 64x64 versions (a quick check of the pipeline)
#     --opset N           export at opset N (11-16: LayerNorm decomposed, as most
#                         Hugging Face exports are; default 17); prints only, since
#                         RESULTS.md's sections are the opset-17 sets
#     --no-results        print the table only; leave bench/RESULTS.md alone
#     --build DIR         build tree holding `onyx` (default: build/; the target is built first)
#     --cache DIR         models and the ORT peer (default: ~/.cache/onyx/compare_ort)
# Needs /usr/bin/python3 with python3-torch, python3-torchvision, python3-onnx;
# node and npm (the peer is installed once into the cache, outside the tree).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/bench/compare_ort
build=$root/build
cache=${XDG_CACHE_HOME:-$HOME/.cache}/onyx/compare_ort
models=""
set=cnn
small=0
opset=17
results=$root/bench/RESULTS.md
pass=()
recorded=()
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; recorded+=("$1" "$2"); shift 2 ;;
    --set) set=$2; recorded+=("$1" "$2"); shift 2 ;;
    --threads|--batches|--iterations|--warmup|--rounds|--cpus)
      [ $# -ge 2 ] || { echo "run.sh: missing value for $1" >&2; exit 2; }
      pass+=("$1" "$2"); recorded+=("$1" "$2"); shift 2 ;;
    --small) small=1; recorded+=("$1"); shift ;;
    --opset) opset=$2; recorded+=("$1" "$2"); shift 2 ;;
    --no-results) results=""; shift ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$opset" in 1[1-7]) ;; *) echo "run.sh: --opset expects 11 to 17, received '$opset'" >&2; exit 2 ;; esac
case "$set" in cnn|sequence) ;; *) echo "run.sh: --set expects cnn or sequence, received '$set'" >&2; exit 2 ;; esac
[ -n "$models" ] || models=$(/usr/bin/python3 "$here/gen_models.py" --set "$set" --list)

cmake --build "$build" --target onyx >/dev/null
peer=$cache/ort_peer
if [ ! -d "$peer/node_modules/onnxruntime-node" ]; then
  mkdir -p "$peer"
  (cd "$peer" && npm install --silent onnxruntime-node@1.30.0 --onnxruntime-node-install=skip >/dev/null)
fi
NODE_PATH=$peer/node_modules node -e "require('onnxruntime-node')" ||
  { echo "run.sh: onnxruntime-node does not load from $peer" >&2; exit 1; }

suffix=""
if [ "$opset" != 17 ]; then
  suffix=_opset$opset
  results=""
fi
if [ $small = 1 ]; then
  dir=$cache/models_small$suffix
  /usr/bin/python3 "$here/gen_models.py" "$dir" --small --set "$set" --models "$models" --opset "$opset"
else
  dir=$cache/models$suffix
  /usr/bin/python3 "$here/gen_models.py" "$dir" --set "$set" --models "$models" --opset "$opset"
fi

# The table's own file does not make the tree it measures "dirty".
revision=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- . ':!bench/RESULTS.md' 2>/dev/null || revision="$revision with local changes"
exec /usr/bin/python3 "$here/compare.py" --onyx "$build/onyx" --peer "$peer/node_modules" \
  --models-dir "$dir" --set "$set" --models "$models" "${pass[@]}" \
  --results "$results" --json "$cache/last_run.json" --revision "$revision" \
  --command "bash bench/compare_ort/run.sh${recorded[*]:+ ${recorded[*]}}"
