#!/usr/bin/env bash
# Installs the Debian 12 packages onyx builds, tests and serves with.
#
# usage: install-deps.sh [--serve]
#   (default)  everything: building, serving, and every test and tool
#   --serve    only what building onyxd, onyx, onyx-load and the demo models
#              needs (compiler, CMake, Ninja, the -dev libraries, the Python
#              modules gen_demo_models.py imports): README's first command and
#              the Dockerfile's build stage. Configure with
#              -DONYX_BUILD_TESTS=OFF -DONYX_BUILD_BENCH=OFF (GoogleTest and
#              Google Benchmark are not installed).
# Idempotent: only packages that are missing are installed; nothing outside apt.
set -euo pipefail

mode=test
case "${1:-}" in
  "") ;;
  --serve) mode=serve ;;
  *) echo "install-deps: unknown argument '$1' (expected no argument or --serve)" >&2; exit 2 ;;
esac

serve_packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libonnx-dev libabsl-dev libspdlog-dev prometheus-cpp-dev libyaml-cpp-dev
  libdnnl-dev ocl-icd-opencl-dev opencl-headers
  libhwy-dev  # Highway: SIMD targets chosen at run time (providers/cpu/simd)
  python3 python3-onnx python3-numpy  # scripts/gen_demo_models.py writes the demo models at build time
)

test_packages=(
  ccache git
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-grpcio python3-protobuf openssl
  python3-torch python3-torchvision
  prometheus  # prometheus + promtool: the metrics e2e tests scrape and lint /metrics; tests/deploy checks and unit-tests the rules
  clang-format-14  # tests/lint/format_check.sh: .clang-format is written for version 14
  clang libomp-dev  # scripts/check_thread_safety.sh: clang -Wthread-safety (with OpenMP headers)
  libclang-rt-14-dev  # scripts/fuzz.sh and sanitize.sh: libFuzzer and the sanitizer runtimes for clang
  locales
  chromium python3-pil  # loadtest/tests/html_report_test.py: opens onyx-load's HTML report headless, reads the screenshot
  nginx python3-yaml  # tests/deploy/: nginx -t on deploy/nginx (grpc module included), the Kubernetes manifests read as YAML
  podman debootstrap runc  # tests/deploy/image_test.sh and scale_out_test.sh: the image built and run (CONTAINERS.md recipe in deploy/README.md)
)

packages=("${serve_packages[@]}")
[ "$mode" = serve ] || packages+=("${test_packages[@]}")

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The ONNX StringNormalizer conformance cases need this locale.
if [ "$mode" = test ] && ! locale -a 2>/dev/null | grep -qi '^en_US\.utf-\?8$'; then
  $sudo_cmd sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' /etc/locale.gen
  $sudo_cmd locale-gen >/dev/null
fi
echo "install-deps: all packages present ($mode)"
