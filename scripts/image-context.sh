#!/usr/bin/env bash
# Stages what onyxd's image carries, from a build tree, as the build context of
# the Dockerfile's runtime-prebuilt target (and the files its build stage
# copies into the runtime stage):
#   OUT/onyx/onyxd, OUT/onyx/onyx   the binaries, debug info stripped
#   OUT/onyx/demo_models/           the demo model repository
#
# usage: image-context.sh BUILD_DIR OUT_DIR
# BUILD_DIR must hold built onyxd, onyx and demo_models (cmake --build BUILD_DIR
# --target onyxd onyx demo_models). OUT_DIR is created; its onyx/ is replaced.
set -euo pipefail

build=${1:?usage: image-context.sh BUILD_DIR OUT_DIR}
out=${2:?usage: image-context.sh BUILD_DIR OUT_DIR}
for f in onyxd onyx; do
  [ -x "$build/$f" ] || { echo "image-context: expected an executable $build/$f, found none" >&2; exit 1; }
done
[ -d "$build/demo_models" ] || { echo "image-context: expected $build/demo_models, found none" >&2; exit 1; }

rm -rf "$out/onyx"
mkdir -p "$out/onyx"
# Line tables (-g1) triple the binaries' size and serve no one in the image.
for f in onyxd onyx; do
  strip --strip-debug -o "$out/onyx/$f" "$build/$f"
done
cp -R "$build/demo_models" "$out/onyx/demo_models"
# Readable by the image's non-root user whatever the umask was.
chmod -R a+rX "$out/onyx"
