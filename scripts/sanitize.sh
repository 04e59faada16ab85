#!/usr/bin/env bash
# Builds onyx with a sanitizer and runs the suites it is meant for.
#
# usage: sanitize.sh address|thread [BUILD_DIR]
#   address  ASan + UBSan (build-asan): every unit test binary, the end-to-end
#            suites and the reliability matrix, with leak checking; onyxd
#            exits non-zero on any report, which fails its suite.
#   thread   TSan (build-tsan): the executor, session and thread-pool tests,
#            the server's batcher, queue, repository and runner tests, and the
#            end-to-end suites that drive onyxd from many client threads.
# Prints one line per suite and a summary; exits non-zero when any suite
# failed or any sanitizer reported. Reports go to BUILD_DIR/sanitizer-logs/.
# Needs the packages of scripts/install-deps.sh. Takes 30-60 minutes on two
# cores (a cold build dominates; ccache makes reruns quick), so CI does not
# run it; record each run's summary line in bench/RESULTS.md.
set -uo pipefail

kind="${1:-}"
case "$kind" in
  address) build="${2:-build-asan}" ;;
  thread) build="${2:-build-tsan}" ;;
  *) echo "usage: sanitize.sh address|thread [BUILD_DIR]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root="$PWD"
logs="$build/sanitizer-logs"

# clang, and for ASan the libFuzzer instrumentation too: build-asan is also
# the build of scripts/fuzz.sh.
fuzzers=OFF
[ "$kind" = address ] && fuzzers=ON
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONYX_SANITIZE="$kind" \
  -DONYX_BUILD_FUZZERS=$fuzzers -DONYX_BUILD_TESTS=ON -DONYX_BUILD_BENCH=OFF >/dev/null || exit 1
# TSan runs a subset: build only what it runs (the conformance runner,
# fuzzers, CLI and load generator would double the cold build).
targets=()
[ "$kind" = thread ] && targets=(--target tsan_absl_sync_canary engine_unit_tests server_unit_tests onyxd demo_models)
cmake --build "$build" "${targets[@]}" || exit 1
rm -rf "$logs" && mkdir -p "$logs"

# Reports go to files (log_path) as well as failing the process, so a report
# from an onyxd started by a Python suite is not lost in a captured stderr.
supp="$root/scripts/sanitizer-suppressions"
if [ "$kind" = address ]; then
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=66:log_path=$root/$logs/asan:detect_stack_use_after_return=0"
  export LSAN_OPTIONS="suppressions=$supp/lsan.txt:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=66:log_path=$root/$logs/ubsan"
else
  # Accesses inside Debian's uninstrumented libraries (gRPC's event engine,
  # protobuf) are not checked; onyx's own code and everything it calls that
  # TSan sees is. absl::Mutex is made visible by tests/util/tsan_absl_sync.cc.
  export TSAN_OPTIONS="exitcode=66:halt_on_error=0:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$supp/tsan.txt:log_path=$root/$logs/tsan"
  # clang's OpenMP runtime reports its fork, join and barriers to TSan
  # through the Archer tool; without it every parallel region would read as
  # racing with the code around it.
  archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | head -1)
  [ -n "$archer" ] || { echo "libarcher.so not found (Debian's libomp-dev of clang's version)" >&2; exit 1; }
  export OMP_TOOL_LIBRARIES="$archer"
  # oneDNN runs on GNU OpenMP, which no tool annotates: one thread keeps its
  # regions out of TSan's view.
  export OMP_NUM_THREADS=1
fi

failed=()
run() {  # run NAME COMMAND...
  local name="$1"; shift
  local start=$SECONDS
  if "$@" >"$logs/$name.out" 2>&1; then
    echo "PASS $name ($((SECONDS - start)) s)"
  else
    echo "FAIL $name ($((SECONDS - start)) s): $logs/$name.out"
    failed+=("$name")
  fi
}

if [ "$kind" = address ]; then
  for t in engine/engine_unit_tests server/server_unit_tests loadtest/onyx_load_tests \
           tests/conformance/conformance_unit_tests "$build"/providers/*/*_tests; do
    t="${t#"$build"/}"
    run "$(basename "$t")" "$build/$t"
  done
  run e2e_and_reliability ctest --test-dir "$build" --output-on-failure -R '^(e2e_|reliability_)'
else
  # TSan must see abseil's synchronization and still report a real race.
  run tsan_sees_absl_sync "$build/tsan_absl_sync_canary"
  race_report=$(TSAN_OPTIONS="log_path=stderr" "$build/tsan_absl_sync_canary" race 2>&1)
  if grep -q "ThreadSanitizer: data race" <<<"$race_report"; then
    echo "PASS tsan_reports_a_real_race"
  else
    echo "FAIL tsan_reports_a_real_race: tsan_absl_sync_canary race was not reported"
    failed+=(tsan_reports_a_real_race)
  fi
  run engine_unit_tests "$build/engine/engine_unit_tests" \
    --gtest_filter='*Executor*:*Session*:*ThreadPool*:*ParallelFor*:*Stream*:*Arena*'
  run server_unit_tests "$build/server/server_unit_tests" \
    --gtest_filter='*Batcher*:*Queue*:*Repository*:*Runner*:*Budget*:*Overload*:*Stream*:*RateLimiter*:*Token*:*Health*:*Metrics*:*BucketSessions*'
  run e2e_server ctest --test-dir "$build" --output-on-failure \
    -R '^(e2e_(batching|rpc|stream|versions|deadline|overload|shutdown|auth|python_client))$'
fi

reports=$(find "$logs" -name 'asan.*' -o -name 'ubsan.*' -o -name 'tsan.*' | sort)
if [ -n "$reports" ]; then
  echo "sanitizer reports:"
  for r in $reports; do echo "  $r: $(grep -m1 -E 'ERROR|WARNING|runtime error' "$r")"; done
fi
echo "sanitize $kind: ${#failed[@]} suite(s) failed, $(echo -n "$reports" | grep -c .) report(s)"
[ ${#failed[@]} -eq 0 ] && [ -z "$reports" ]
