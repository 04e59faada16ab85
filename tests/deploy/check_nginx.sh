#!/usr/bin/env bash
# deploy_nginx: deploy/nginx/ as nginx itself reads it, and its rules checked
# against the protocol and onyxd.
#
# usage: check_nginx.sh ONYXD [SOURCE_ROOT]
#
# 1. `nginx -t` on deploy/nginx/nginx.conf (which includes onyx.conf) with a
#    scratch prefix, so no root-owned path is touched.
# 2. nginx_conf_check.py: the retried methods, the refused control RPCs and
#    the body limit against proto/ and `ONYXD --help`.
# A missing nginx fails the test: scripts/install-deps.sh installs it.
# $PYTHON (default python3) runs the Python half; ctest sets it.
set -euo pipefail

onyxd=${1:?usage: check_nginx.sh ONYXD [SOURCE_ROOT]}
root=$(cd "${2:-$(dirname "$0")/../..}" && pwd)  # absolute: nginx reads -c relative to -p

nginx_bin=$(command -v nginx || true)
if [ -z "$nginx_bin" ] && [ -x /usr/sbin/nginx ]; then nginx_bin=/usr/sbin/nginx; fi
if [ -z "$nginx_bin" ]; then
  echo "FAIL nginx_binary: nginx not found (Debian package nginx; scripts/install-deps.sh installs it)"
  exit 1
fi

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
mkdir -p "$prefix/logs" "$prefix/temp"
if ! "$nginx_bin" -t -q -p "$prefix/" -e "$prefix/logs/error.log" -c "$root/deploy/nginx/nginx.conf"; then
  echo "FAIL nginx_t: nginx -t rejected deploy/nginx/nginx.conf"
  cat "$prefix/logs/error.log" 2>/dev/null || true
  exit 1
fi
echo "PASS nginx_t"

exec "${PYTHON:-python3}" "$(dirname "$0")/nginx_conf_check.py" "$onyxd" "$root"
