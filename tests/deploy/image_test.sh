#!/usr/bin/env bash
# deploy_image: the onyxd image as an operator runs it.
#
# usage: image_test.sh BUILD_DIR [SOURCE_ROOT]
#
# BUILD_DIR holds built onyxd, onyx, onyx-load and demo_models. Builds the
# Dockerfile's runtime-prebuilt target from it (build_image.sh: the base image
# is made once and cached), then checks:
#   - the image: runs as 65532:65532, has a HEALTHCHECK running `onyx health`,
#     the OCI labels, and a size within the budget (deploy/README.md);
#   - a container on host networking, addresses from ONYX_GRPC_ADDRESS /
#     ONYX_METRICS_ADDRESS and a flag appended to `podman run`: `onyx health`
#     from the host answers SERVING (exit 0), the image's own health check
#     passes, onyxd (PID 1) runs as uid 65532, 200 ModelInfer calls through the
#     port (onyx-load) all succeed and /metrics counts them;
#   - `podman stop` (SIGTERM): onyxd lingers, drains and exits 0.
# Prints PASS/FAIL per check and the time each phase took; exits 1 on a failure.
# Needs root, podman, runc and debootstrap (scripts/install-deps.sh).
set -uo pipefail

build=$(cd "${1:?usage: image_test.sh BUILD_DIR [SOURCE_ROOT]}" && pwd)
root=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
podman=("$here/podman.sh")
# Budget for the runtime image, uncompressed, as `podman image inspect` reports it.
budget_mb=${ONYX_IMAGE_BUDGET_MB:-250}

tag=localhost/onyx:deploy-image-test-$$
name=onyx-image-test-$$
tmp=$(mktemp -d)
failed=0
cleanup() {
  "${podman[@]}" rm -f -t 0 "$name" > /dev/null 2>&1
  "${podman[@]}" rmi -f "$tag" > /dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
check() {  # check NAME EXPECTED RECEIVED
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', received '$3'"; fi
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start=$(date +%s)
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL root: expected to run as root (debootstrap, podman's host networking), running as uid $(id -u)"
  exit 1
fi
for tool in onyxd onyx onyx-load; do
  [ -x "$build/$tool" ] || { echo "FAIL build_tree: expected an executable $build/$tool"; exit 1; }
done
if ! bash "$here/build_image.sh" "$build" "$root" "$tag"; then
  echo "FAIL build_image: see above"
  exit 1
fi
built=$(date +%s)

# --- the image -----------------------------------------------------------------------------------
inspect() { "${podman[@]}" image inspect --format "$1" "$tag"; }
check image_user "65532:65532" "$(inspect '{{.Config.User}}')"
healthcheck=$(inspect '{{json .HealthCheck}}' 2>/dev/null)
case "$healthcheck" in
  *'"/opt/onyx/onyx"'*'"health"'*) pass image_healthcheck ;;
  *) fail image_healthcheck "expected a HEALTHCHECK running /opt/onyx/onyx health, received '$healthcheck'" ;;
esac
for label in title description version revision base.name; do
  value=$(inspect "{{index .Labels \"org.opencontainers.image.$label\"}}")
  if [ -n "$value" ] && [ "$value" != "<no value>" ]; then pass "image_label_$label"; else fail "image_label_$label" "missing"; fi
done
check image_entrypoint '[/opt/onyx/onyxd]' "$(inspect '{{.Config.Entrypoint}}')"
size=$(inspect '{{.Size}}')
size_mb=$((size / 1000000))
if [ "$size_mb" -le "$budget_mb" ]; then
  pass "image_size ($size_mb MB, budget $budget_mb MB)"
else
  fail image_size "expected at most $budget_mb MB, received $size_mb MB"
fi

# --- a container ---------------------------------------------------------------------------------
grpc_port=$(free_port)
metrics_port=$(free_port)
address=127.0.0.1:$grpc_port
if ! "${podman[@]}" run -d --name "$name" --network host \
     -e "ONYX_GRPC_ADDRESS=$address" -e "ONYX_METRICS_ADDRESS=127.0.0.1:$metrics_port" \
     "$tag" --shutdown-linger-seconds 1 > /dev/null; then
  echo "FAIL container_start: podman run failed"
  exit 1
fi
code=3
for _ in $(seq 1 120); do
  "$build/onyx" health --address "$address" --timeout 1 > /dev/null 2>&1 && { code=0; break; }
  [ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$name")" = true ] || break
  sleep 0.5
done
ready=$(date +%s)
if [ "$code" -ne 0 ]; then
  fail container_serving "onyx health never answered SERVING on $address; container log:"
  "${podman[@]}" logs "$name" 2>&1 | tail -n 20
  exit 1
fi
pass "container_serving (onyx health from the host, $((ready - built)) s)"
if "${podman[@]}" healthcheck run "$name" > "$tmp/health.out" 2>&1; then
  pass container_healthcheck
else
  fail container_healthcheck "podman healthcheck run: $(cat "$tmp/health.out")"
fi
check container_uid 65532 "$("${podman[@]}" exec "$name" awk '/^Uid:/ {print $2}' /proc/1/status)"
check container_pid1 onyxd "$("${podman[@]}" exec "$name" cat /proc/1/comm)"
# A CPU-only host: onyxd serves (above) in an image that holds no CUDA library.
check container_no_cuda_libraries "" \
  "$("${podman[@]}" exec "$name" sh -c 'find / -xdev -name "libcuda*.so*" -o -xdev -name "libcublas*.so*" -o -xdev -name "libcudnn*.so*" 2>/dev/null | head -3')"
check container_appended_flag 1 \
  "$("${podman[@]}" exec "$name" sh -c 'tr "\0" "\n" < /proc/1/cmdline | grep -A1 -x -- --shutdown-linger-seconds | tail -n 1')"

requests=200
"$build/onyx-load" --target "$address" --model mlp --rate 100 --requests "$requests" --warmup 0s \
  --quiet --json "$tmp/load.json" > "$tmp/load.out" 2>&1
load_code=$?
result=$(python3 - "$tmp/load.json" <<'PY'
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]["all"]
print("%d ok, %d failed" % (level["ok"], level["failed"] + level["dropped"]))
PY
)
check "container_inference (onyx-load exit $load_code)" "$requests ok, 0 failed" "$result"
counted=$(python3 - "127.0.0.1:$metrics_port" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=10).read().decode()
total = 0
for labels, value in re.findall(r'^onyx_requests_total\{([^}]*)\} (\S+)$', text, re.M):
    pairs = dict(re.findall(r'(\w+)="([^"]*)"', labels))
    if pairs.get("model") == "mlp" and pairs.get("code") == "OK":
        total += float(value)
print(int(total))
PY
)
# Warm-up runs are not requests; onyx-load's calls are all there is.
check container_metrics_count "$requests" "$counted"

stop_start=$(date +%s)
"${podman[@]}" stop -t 30 "$name" > /dev/null
stop_code=$?
stopped=$(date +%s)
check "container_stop (podman stop exit, $((stopped - stop_start)) s)" 0 "$stop_code"
check container_exit_code 0 "$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name")"
logs=$("${podman[@]}" logs "$name" 2>&1)
case "$logs" in
  *"received SIGTERM"*"stopped"*) pass container_drained ;;
  *) fail container_drained "expected 'received SIGTERM' then 'stopped' in the log; its end: $(echo "$logs" | tail -n 5)" ;;
esac

end=$(date +%s)
echo "times: image build $((built - start)) s, start to SERVING $((ready - built)) s, total $((end - start)) s"
echo "$failed failed"
[ "$failed" -eq 0 ]
