#!/usr/bin/env bash
# deploy_prometheus: deploy/prometheus/ and the Grafana dashboard's queries as
# promtool reads them, and their names against onyxd's sources.
#
# usage: check_prometheus.sh ONYXD [SOURCE_ROOT]
#
# 1. promtool check config: prometheus.yml and the rule files it names;
# 2. promtool check rules: recording_rules.yml, alerting_rules.yml;
# 3. promtool test rules: tests/recording_test.yml (values worked out by
#    hand) and tests/alerts_test.yml (each alert fires and stays silent);
# 4. every panel query of deploy/grafana/onyx.json (panel_queries.py) parses
#    as PromQL (as recording rules of a scratch file, through promtool);
# 5. metric_names_check.py: every metric, label and matched state/reason
#    value is one onyxd exports.
# ONYXD is the daemon the names belong to; its `--help` must run (a stale or
# missing build fails here rather than in a later step).
# A missing promtool fails the test: scripts/install-deps.sh installs the
# Debian package prometheus, which carries it.
set -euo pipefail

onyxd=${1:?usage: check_prometheus.sh ONYXD [SOURCE_ROOT]}
if ! command -v promtool >/dev/null; then
  echo "FAIL promtool_binary: promtool not found (Debian package prometheus; scripts/install-deps.sh installs it)"
  exit 1
fi
root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}  # with python3-yaml; ctest sets it
if ! "$onyxd" --help >/dev/null; then
  echo "FAIL onyxd_help: $onyxd --help did not run"
  exit 1
fi

failed=0
step() {  # step NAME COMMAND...: runs it, prints PASS or FAIL with its output
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then
    echo "PASS $name"
  else
    echo "FAIL $name:"
    echo "$out"
    failed=$((failed + 1))
  fi
}

prom="$root/deploy/prometheus"
step promtool_check_config promtool check config "$prom/prometheus.yml"
step promtool_check_rules promtool check rules "$prom/recording_rules.yml" "$prom/alerting_rules.yml"
step promtool_test_recording promtool test rules "$prom/tests/recording_test.yml"
step promtool_test_alerts promtool test rules "$prom/tests/alerts_test.yml"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if "$python" "$root/deploy/grafana/panel_queries.py" "$root/deploy/grafana/onyx.json" > "$scratch/queries"; then
  "$python" - "$scratch/queries" > "$scratch/panels.yml" <<'PY'
import json, sys
exprs = [line.rstrip("\n") for line in open(sys.argv[1]) if line.strip()]
print("groups:\n  - name: dashboard_panels\n    rules:")
for i, expr in enumerate(exprs):
    print("      - record: panel:query_%d\n        expr: %s" % (i, json.dumps(expr)))
PY
  count=$(grep -c . "$scratch/queries")
  if [ "$count" -lt 15 ]; then
    echo "FAIL panel_queries: only $count expressions printed"
    failed=$((failed + 1))
  else
    step "panel_queries_parse ($count)" promtool check rules "$scratch/panels.yml"
  fi
else
  echo "FAIL panel_queries: panel_queries.py failed"
  failed=$((failed + 1))
fi

step metric_names "$python" "$here/metric_names_check.py" "$root"

echo "$failed failed"
[ "$failed" -eq 0 ]
