#!/usr/bin/env bash
# podman with the settings the deploy tests need on hosts like the CI machines
# (deploy/README.md, Testing the image):
#   --runtime runc              crun refuses those hosts' cgroup layout; runc works
#   --cgroup-manager=cgroupfs   no systemd there
#   CONTAINERS_CONF             a containers.conf with `default_ulimits = []`:
#                               podman's default raises RLIMIT_NOFILE, which is
#                               not permitted there
# Harmless elsewhere. An existing $CONTAINERS_CONF is used as it is.
#
# usage: podman.sh PODMAN_ARGS...
set -euo pipefail

runc=$(command -v runc || true)
[ -n "$runc" ] || [ ! -x /usr/sbin/runc ] || runc=/usr/sbin/runc
if [ -z "$runc" ] || ! command -v podman >/dev/null; then
  echo "podman.sh: expected podman and runc on PATH (Debian packages podman, runc;" \
       "scripts/install-deps.sh installs them), found podman=$(command -v podman || echo none) runc=${runc:-none}" >&2
  exit 1
fi
if [ -z "${CONTAINERS_CONF:-}" ]; then
  conf_dir=${ONYX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/onyx}
  mkdir -p "$conf_dir"
  if [ ! -f "$conf_dir/containers.conf" ]; then
    printf '[containers]\ndefault_ulimits = []\n' > "$conf_dir/containers.conf.$$"
    mv "$conf_dir/containers.conf.$$" "$conf_dir/containers.conf"
  fi
  export CONTAINERS_CONF=$conf_dir/containers.conf
fi
exec podman --runtime "$runc" --cgroup-manager=cgroupfs "$@"
