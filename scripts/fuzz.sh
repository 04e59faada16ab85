#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with ASan+UBSan (clang, in the
# same build directory as `sanitize.sh address`) and runs each one.
#
# usage: [FUZZ_JOBS=N] fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 60; the recorded runs use 1800
#   TARGET              model request config bytes shm (default: all)
#   FUZZ_JOBS           targets run at once (default: the number of CPUs)
# Each target starts from its committed seeds (tests/fuzz/corpus/<t>) and its
# dictionary, and grows a working corpus in build-asan/fuzz/<t>/corpus (kept
# between runs). A crash, leak, timeout (10 s) or an input that needs more
# than 2 GiB leaves its input in build-asan/fuzz/<t>/artifacts and fails the
# run; turn it into a regression test by copying it to
# tests/fuzz/regressions/<t>/ (replayed by ctest's fuzz_<t>). Prints one
# summary line per target; record them in bench/RESULTS.md.
set -uo pipefail

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model request config bytes shm)
cd "$(dirname "$0")/.."
build=build-asan

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DONYX_SANITIZE=address -DONYX_BUILD_FUZZERS=ON -DONYX_BUILD_TESTS=ON -DONYX_BUILD_BENCH=OFF >/dev/null || exit 1
cmake --build "$build" --target $(printf '%s_fuzzer ' "${targets[@]}") || exit 1

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# One target per core at a time; each prints its summary line when it ends.
jobs="${FUZZ_JOBS:-$(nproc)}"
run_target() {
  local t="$1"
  local work="$build/fuzz/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  local dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  local log="$work/last-run.log"
  "$build/tests/fuzz/${t}_fuzzer" "$work/corpus" "tests/fuzz/corpus/$t" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" >"$log" 2>&1
  local status=$?
  local execs cov ft corpus
  execs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  corpus=$(find "$work/corpus" -type f | wc -l)
  if [ $status -eq 0 ]; then
    echo "PASS $t: ${seconds} s, ${execs:-?} inputs, coverage ${cov:-?} edges / ${ft:-?} features, corpus $corpus"
  else
    echo "FAIL $t (exit $status): $(grep -m1 -E 'ERROR|runtime error|invariant broken|Timeout|out-of-memory' "$log")"
    echo "     input and log: $work/artifacts/, $log"
  fi
  return $status
}
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_target "$t" &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit $failed
