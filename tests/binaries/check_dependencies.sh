#!/usr/bin/env bash
# What the built binaries may depend on and export (tests/README.md):
#  - onyxd and onyx need no CUDA library: a CPU-only host runs them as they are;
#    CUDA comes only with the cuda provider library, loaded on demand;
#  - a provider library exports its entry point and nothing else (the test
#    provider also its copy counter), so two providers' symbols cannot collide.
# usage: check_dependencies.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: check_dependencies.sh BUILD_DIR}
failed=0
cuda_pattern='lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nvrtc|nvJitLink|nvToolsExt|cufft|curand|cusparse)\.so'

for binary in "$build/onyxd" "$build/onyx"; do
  if [[ ! -x $binary ]]; then
    echo "FAIL: $binary was not built"
    failed=1
    continue
  fi
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if grep -Eq "$cuda_pattern" <<<"$needed"; then
    echo "FAIL: $binary links a CUDA library: $(grep -E "$cuda_pattern" <<<"$needed" | tr '\n' ' ')"
    failed=1
  else
    echo "ok: $binary needs no CUDA library ($(wc -l <<<"$needed") libraries)"
  fi
done

check_exports() {  # library, allowed symbols...
  local library=$1
  shift
  local exported
  exported=$(nm -D --defined-only "$library" | awk '{print $3}' | sort)
  local extra
  extra=$(comm -23 <(echo "$exported") <(printf '%s\n' "$@" | sort))
  if [[ -n $extra ]]; then
    echo "FAIL: $library exports $(wc -l <<<"$extra") symbols besides $*: $(head -5 <<<"$extra" | tr '\n' ' ')"
    failed=1
  elif ! grep -qx OnyxProviderLibraryEntry <<<"$exported"; then
    echo "FAIL: $library does not export OnyxProviderLibraryEntry"
    failed=1
  else
    echo "ok: $library exports only: $(tr '\n' ' ' <<<"$exported")"
  fi
}

# The framework symbols a provider library leaves undefined resolve against the
# executable that loads it: onyxd and onyx must export every one (an object the
# binary itself never referenced would otherwise be missing, and dlopen fail).
check_resolves() {  # library, binaries...
  local library=$1
  shift
  local needed
  needed=$(nm -D --undefined-only "$library" | awk '{print $2}' | grep '4onyx' | sort -u || true)
  for binary in "$@"; do
    local missing
    missing=$(comm -23 <(echo "$needed") <(nm -D --defined-only "$binary" | awk '{print $3}' | sort -u) | grep -v '^$' || true)
    if [[ -n $missing ]]; then
      echo "FAIL: $binary does not export $(wc -l <<<"$missing") onyx symbols $library needs: $(head -3 <<<"$missing" | c++filt | tr '\n' ';')"
      failed=1
    else
      echo "ok: $binary exports all $(grep -c . <<<"$needed") onyx symbols $library needs"
    fi
  done
}

check_exports "$build/test_providers/libonyx_provider_test.so" OnyxProviderLibraryEntry OnyxTestProviderCopies
check_resolves "$build/test_providers/libonyx_provider_test.so" "$build/onyxd" "$build/onyx"
if [[ -f $build/libonyx_provider_cuda.so ]]; then
  check_exports "$build/libonyx_provider_cuda.so" OnyxProviderLibraryEntry
  check_resolves "$build/libonyx_provider_cuda.so" "$build/onyxd" "$build/onyx"
else
  echo "skip: no libonyx_provider_cuda.so in this build (no CUDA toolkit found at configure time)"
fi
exit $failed
