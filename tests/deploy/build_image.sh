#!/usr/bin/env bash
# Builds the Dockerfile's runtime-prebuilt target from a build tree, making the
# debian:12 base image first when the local store lacks it.
#
# usage: build_image.sh BUILD_DIR SOURCE_ROOT TAG
#
# No registry is needed: the base is a debootstrap (minbase) of bookworm from
# the mirror apt uses (or $ONYX_DEBIAN_MIRROR), imported as
# docker.io/library/debian:12, so `FROM debian:12` resolves locally. The rootfs
# tarball is cached in $ONYX_CACHE_DIR/base-image (default ~/.cache/onyx), so
# only the first run on a machine pays for debootstrap (about 2 minutes);
# delete it to refresh the base. The runtime stage's apt-get layer is cached by
# podman. Prints the time each step took. Needs root (debootstrap), podman,
# runc, debootstrap.
set -euo pipefail

build=$(cd "${1:?usage: build_image.sh BUILD_DIR SOURCE_ROOT TAG}" && pwd)
root=$(cd "${2:?usage: build_image.sh BUILD_DIR SOURCE_ROOT TAG}" && pwd)
tag=${3:?usage: build_image.sh BUILD_DIR SOURCE_ROOT TAG}
here=$(cd "$(dirname "$0")" && pwd)
podman=("$here/podman.sh")
cache=${ONYX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/onyx}/base-image
base=docker.io/library/debian:12

# The first bookworm URI of apt's sources (deb822 .sources, then one-line .list).
apt_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '/^URIs:/ {u = $2} /^Suites:/ {for (i = 2; i <= NF; i++) if ($i == "bookworm") s = 1}
         /^[[:space:]]*$/ {if (u && s) {print u; exit} u = ""; s = 0}
         END {if (u && s) print u}' "$f"
  done
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
    sed -nE 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+bookworm([[:space:]].*)?$/\2/p'
}

t0=$(date +%s)
if "${podman[@]}" image exists "$base"; then
  echo "build_image: $base present"
else
  tarball=$cache/debian-12-minbase.tar
  if [ ! -s "$tarball" ]; then
    mirror=${ONYX_DEBIAN_MIRROR:-$(apt_mirror | head -n 1 || true)}
    if [ -z "$mirror" ]; then
      echo "build_image: expected a bookworm mirror in /etc/apt/sources.list*, found none (set ONYX_DEBIAN_MIRROR)" >&2
      exit 1
    fi
    command -v debootstrap >/dev/null || {
      echo "build_image: expected debootstrap on PATH (scripts/install-deps.sh installs it), found none" >&2
      exit 1
    }
    mkdir -p "$cache"
    rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
    trap 'rm -rf "$rootfs"' EXIT
    echo "build_image: debootstrap --variant=minbase bookworm from $mirror"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1 || {
      echo "build_image: debootstrap failed; the end of its log:" >&2
      tail -n 20 "$cache/debootstrap.log" >&2
      exit 1
    }
    # What Debian's published images leave out: the downloaded .debs and apt's
    # caches (over 100 MB); the Dockerfile runs apt-get update itself.
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs"
    trap - EXIT
  fi
  "${podman[@]}" import --quiet "$tarball" "$base" > /dev/null
  echo "build_image: imported $base from $tarball"
fi
t1=$(date +%s)

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
bash "$root/scripts/image-context.sh" "$build" "$context"
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
# --format docker keeps HEALTHCHECK; --layers reuses the runtime stage's apt layer.
"${podman[@]}" build --quiet --network host --pull=never --layers --format docker \
  --target runtime-prebuilt --build-arg "REVISION=$revision" \
  -f "$root/Dockerfile" -t "$tag" "$context" > /dev/null
t2=$(date +%s)
echo "build_image: $tag built (base $((t1 - t0)) s, image $((t2 - t1)) s)"
