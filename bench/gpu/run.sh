#!/usr/bin/env bash
# The CUDA provider's GPU evidence, in one prepared run (bench/README.md, "GPU").
#
# Here (no GPU needed):
#   bash bench/gpu/run.sh pack
#     a Release build (or BUILD=DIR, a configured tree) of onyx, libonyx_provider_cuda.so and cuda_device_tests,
#     with the shared libraries they need beyond glibc and CUDA's own, stripped
#     into .gpu_bundle/onyx-gpu.tar.xz (under the device machine's 64 MiB;
#     .gpu_bundle/ is git-ignored through .git/info/exclude).
# On the GPU machine (the device tool: carry [".gpu_bundle"]):
#   bash bench/gpu/run.sh run
#     unpacks the bundle; CUDA's libraries come from that machine (its toolkit
#     and PyTorch's nvidia-* packages); exports the models with its torch
#     (export_models.py); runs cuda_device_tests; for every model checks zero
#     CPU fallback (onyx inspect --max-cpu-fallback 0) and outputs against the
#     CPU provider at batch 2 (rtol 1e-3 float32, 1e-2 float16); times batch 1,
#     8 and 32 with a stream and with a CUDA graph, and PyTorch eager beside
#     them; writes $OUT/gpu_report.md (for bench/RESULTS.md) and
#     $OUT/gpu_results.jsonl. Sized to finish in under 10 minutes.
set -euo pipefail
mode=${1:-run}
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$root/.gpu_bundle/onyx-gpu.tar.xz

pack() {
  # BUILD=DIR reuses a configured tree as it is; otherwise build-gpu/ is made.
  local build=${BUILD:-$root/build-gpu}
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DONYX_CUDA=ON \
      -DONYX_BUILD_SERVER=OFF -DONYX_BUILD_BENCH=OFF -DONYX_BUILD_TESTS=ON >/dev/null
  fi
  cmake --build "$build" --target onyx onyx_provider_cuda cuda_device_tests
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/onyx/lib"
  cp "$build/onyx" "$build/libonyx_provider_cuda.so" "$build/providers/cuda/cuda_device_tests" "$stage/onyx/"
  # Everything the binaries load but glibc (the GPU machine's is newer) and
  # CUDA's libraries (the GPU machine's match its driver).
  for f in "$stage"/onyx/onyx "$stage"/onyx/cuda_device_tests; do
    ldd "$f" | awk '/=> \// {print $3}'
  done | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64)\.so|/lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/onyx/lib/"; done
  strip --strip-unneeded "$stage"/onyx/onyx "$stage"/onyx/cuda_device_tests "$stage"/onyx/*.so "$stage"/onyx/lib/*.so* 2>/dev/null || true
  mkdir -p "$(dirname "$bundle")"
  grep -qx '/.gpu_bundle/' "$root/.git/info/exclude" 2>/dev/null || echo '/.gpu_bundle/' >>"$root/.git/info/exclude"
  tar -C "$stage" -cJf "$bundle" onyx
  rm -rf "$stage"
  local mib=$(($(stat -c %s "$bundle") / 1048576))
  echo "bundle: $bundle ($mib MiB)"
  if ((mib >= 60)); then
    echo "the bundle is over 60 MiB: the device machine takes 64 MiB in all" >&2
    exit 1
  fi
}

# CUDA's libraries on the GPU machine: its toolkit, then PyTorch's wheels.
cuda_library_path() {
  local dirs=(/usr/local/cuda/lib64)
  while read -r d; do dirs+=("$d"); done < <(python3 - <<'PY'
import glob, os
try:
    import nvidia
    for base in nvidia.__path__:
        for lib in sorted(glob.glob(os.path.join(base, "**", "lib"), recursive=True)):
            if glob.glob(os.path.join(lib, "lib*.so*")):
                print(lib)
except ImportError:
    pass
PY
)
  local IFS=:
  echo "${dirs[*]}"
}

run() {
  local out=${OUT:-$root/.gpu_out}
  mkdir -p "$out"
  local work=/tmp/onyx-gpu
  rm -rf "$work" && mkdir -p "$work"
  [[ -f $bundle ]] || { echo "no $bundle: run 'bash bench/gpu/run.sh pack' here first" >&2; exit 1; }
  tar -C "$work" -xJf "$bundle"
  local bin=$work/onyx
  export LD_LIBRARY_PATH="$bin/lib:$(cuda_library_path)"
  export ONYX_PROVIDER_PATH=$bin
  local report=$out/gpu_report.md results=$out/gpu_results.jsonl
  : >"$results"
  {
    echo "## GPU: the CUDA provider on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) ($(date -u +%F))"
    echo
    echo "Reproduce: \`bash bench/gpu/run.sh pack\` here, then \`bash bench/gpu/run.sh run\` on the GPU machine (carry .gpu_bundle)."
    echo
  } >"$report"

  echo "### cuda_device_tests" >>"$report"
  if timeout 120 "$bin/cuda_device_tests" --gtest_brief=1 >"$out/device_tests.log" 2>&1; then
    echo "passed: $(grep -c '^\[       OK' "$out/device_tests.log" || true) tests" >>"$report"
  else
    echo "FAILED (see device_tests.log):" >>"$report"
    grep -E 'FAILED|Failure' "$out/device_tests.log" | head -20 | sed 's/^/    /' >>"$report"
  fi
  echo >>"$report"

  local models=$work/models
  timeout 240 python3 "$root/bench/gpu/export_models.py" "$models" >"$out/export.log" 2>&1 || {
    echo "model export failed: $(tail -3 "$out/export.log")" >>"$report"; exit 1; }
  local count
  count=$(python3 -c "import json; print(len(json.load(open('$models/models.json'))))")

  echo "### Fallback and agreement with the CPU provider (batch 2)" >>"$report"
  echo >>"$report"
  echo "| model | precision | CPU fallback nodes | outputs agree | worst |error| / (rtol + |cpu|) |" >>"$report"
  echo "|---|---|---|---|---|" >>"$report"
  for ((i = 0; i < count; ++i)); do
    read -r name precision path < <(python3 -c "import json; e=json.load(open('$models/models.json'))[$i]; print(e['name'], e['precision'], e['path'])")
    local fallback
    fallback=$("$bin/onyx" inspect "$path" --providers cuda --require-providers 2>&1 |
      sed -n 's/.*cpu fallback nodes: \([0-9]*\).*/\1/p' | head -1)
    local dir=$work/check/$name-$precision rtol=1e-3
    [[ $precision == fp16 ]] && rtol=1e-2
    python3 "$root/bench/gpu/compare.py" inputs "$i" "$models/models.json" 2 "$dir/in"
    # The reference: the float32 model on the CPU provider.
    local reference=${path%_fp16.onnx}
    [[ $reference == "$path" ]] || reference=$reference.onnx
    # Float16 inputs become float32 for the reference.
    python3 - "$dir/in" "$dir/in32" <<'PY'
import glob, os, sys
import numpy as np, onnx
from onnx import numpy_helper
os.makedirs(sys.argv[2], exist_ok=True)
for p in glob.glob(os.path.join(sys.argv[1], "input_*.pb")):
    t = onnx.TensorProto(); t.ParseFromString(open(p, "rb").read()); a = numpy_helper.to_array(t)
    if a.dtype == np.float16: a = a.astype(np.float32)
    open(os.path.join(sys.argv[2], os.path.basename(p)), "wb").write(numpy_helper.from_array(a, t.name).SerializeToString())
PY
    local agreement
    if timeout 120 "$bin/onyx" run --model "$path" --inputs "$dir/in" --outputs "$dir/cuda" --providers cuda --require-providers >"$dir.log" 2>&1 &&
      timeout 120 "$bin/onyx" run --model "$reference" --inputs "$dir/in32" --outputs "$dir/cpu" --providers cpu >>"$dir.log" 2>&1; then
      agreement=$(python3 "$root/bench/gpu/compare.py" check "$dir/cuda" "$dir/cpu" "$rtol" || true)
    else
      agreement="run failed: $(tail -1 "$dir.log")"
    fi
    echo "{\"check\": \"$name\", \"precision\": \"$precision\", \"fallback\": \"${fallback:-?}\", \"agreement\": $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$agreement")}" >>"$results"
    local agree worst
    agree=$(python3 -c "import json,sys; d=json.loads(sys.argv[1]); print('yes' if d['agree'] else 'NO')" "$agreement" 2>/dev/null || echo "$agreement")
    worst=$(python3 -c "import json,sys; print('%.2e' % json.loads(sys.argv[1])['worst_scaled_error'])" "$agreement" 2>/dev/null || echo "-")
    echo "| $name | $precision | ${fallback:-?} | $agree | $worst |" >>"$report"
  done
  echo >>"$report"

  echo "### Latency (median ms of 50 runs after 10 warm-up; inputs and outputs copied every run)" >>"$report"
  echo >>"$report"
  echo "| model | precision | batch | stream | CUDA graph | PyTorch eager | eager / graph |" >>"$report"
  echo "|---|---|---|---|---|---|---|" >>"$report"
  for ((i = 0; i < count; ++i)); do
    read -r name precision path < <(python3 -c "import json; e=json.load(open('$models/models.json'))[$i]; print(e['name'], e['precision'], e['path'])")
    for batch in 1 8 32; do
      local stream graph eager
      stream=$(timeout 60 "$bin/onyx" bench "$path" --providers cuda --batch "$batch" --iterations 50 --warmup 10 2>/dev/null | tee -a "$results" |
        python3 -c "import json,sys; print('%.3f' % json.loads(sys.stdin.read())['median_ms'])" 2>/dev/null || echo "failed")
      graph=$(timeout 60 "$bin/onyx" bench "$path" --providers "cuda:cuda_graph=1" --batch "$batch" --iterations 50 --warmup 10 2>/dev/null | tee -a "$results" |
        python3 -c "import json,sys; print('%.3f' % json.loads(sys.stdin.read())['median_ms'])" 2>/dev/null || echo "failed")
      eager=$(timeout 90 python3 "$root/bench/gpu/torch_eager.py" "$name" "$precision" "$batch" 2>/dev/null | tee -a "$results" |
        python3 -c "import json,sys; print('%.3f' % json.loads(sys.stdin.read())['median_ms'])" 2>/dev/null || echo "failed")
      local ratio
      ratio=$(python3 -c "import sys; a,b=sys.argv[1:]; print('%.2f' % (float(a)/float(b)))" "$eager" "$graph" 2>/dev/null || echo "-")
      echo "| $name | $precision | $batch | $stream | $graph | $eager | $ratio |" >>"$report"
    done
  done
  cat "$report"
}

case $mode in
  pack) pack ;;
  run) run ;;
  *) echo "usage: run.sh pack | run" >&2; exit 2 ;;
esac
