#!/usr/bin/python3
"""End-to-end test: a real Prometheus server scrapes onyxd and answers PromQL.

usage: prometheus_test.py --onyxd BIN --proto-dir DIR --repo DIR

Starts BIN against REPO (the demo repository), then the `prometheus` binary
(Debian package prometheus, installed by scripts/install-deps.sh) on a free
loopback port with a 1 s scrape interval and its storage in a temporary
directory, scraping onyxd's /metrics. Sends mlp requests until Prometheus has
scraped them, then asks its HTTP API for the P99 request latency per model and
for the arena's bytes in use, and checks that both answer with numbers.
A missing prometheus binary fails the test (scripts/install-deps.sh installs
it), like any other failure.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed";
exits non-zero on any failure. Both servers are always stopped.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402  stubs, server start/stop, cases

check = base.check
READY_TIMEOUT_S = 30.0
QUERY_TIMEOUT_S = 30.0  # how long the traffic and queries may take to show up
P99_QUERY = ('histogram_quantile(0.99, sum by (le, model) '
             '(rate(onyx_request_duration_seconds_bucket[30s])))')
ARENA_QUERY = 'sum by (model) (onyx_arena_reserved_bytes)'

CONFIG = """global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: onyxd
    static_configs:
      - targets: ['%s']
"""


def http_json(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read().decode())


def start_prometheus(binary, tmp, target):
    port = base.free_ports(1)[0]
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write(CONFIG % target)
    log = open(os.path.join(tmp, "prometheus.log"), "wb")
    proc = subprocess.Popen(
        [binary, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
         "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
        stdout=log, stderr=subprocess.STDOUT)
    log.close()
    return proc, "http://127.0.0.1:%d" % port


def wait_prometheus_ready(proc, url):
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return "prometheus exited with status %s" % proc.returncode
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=1) as r:
                if r.status == 200:
                    return None
        except OSError:
            pass
        time.sleep(0.2)
    return "prometheus not ready after %.0f s" % READY_TIMEOUT_S


def query(url, promql):
    """The instant vector's [(labels, value)], or raises CaseFailure."""
    reply = http_json(url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
    check(reply.get("status") == "success", "query %s: %r" % (promql, reply))
    check(reply["data"]["resultType"] == "vector", "query %s: result %r" % (promql, reply["data"]))
    return [(r["metric"], float(r["value"][1])) for r in reply["data"]["result"]]


def until_numbers(url, promql, send=None):
    """Polls `promql` (calling send() before each try) until it returns a
    sample whose value is a finite number; returns the samples."""
    deadline = time.monotonic() + QUERY_TIMEOUT_S
    last = None
    while time.monotonic() < deadline:
        if send is not None:
            send()
        last = query(url, promql)
        if last and all(math.isfinite(v) for _, v in last):
            return last
        time.sleep(0.5)
    raise base.CaseFailure("no finite answer to %s within %.0f s (last: %r)" % (promql, QUERY_TIMEOUT_S, last))


def build_cases(client, prom_url, onyxd_metrics):
    rng = np.random.default_rng(3)

    def send():
        for _ in range(20):
            x = rng.random((1, 16), dtype=np.float32)
            client.infer(client.infer_request("mlp", "input", "FP32", [1, 16], raw=x.tobytes()))

    def target_up():
        deadline = time.monotonic() + QUERY_TIMEOUT_S
        while time.monotonic() < deadline:
            up = query(prom_url, 'up{job="onyxd"}')
            if up and up[0][1] == 1:
                return
            time.sleep(0.5)
        targets = http_json(prom_url + "/api/v1/targets")
        raise base.CaseFailure("onyxd at %s never scraped as up: %r" % (onyxd_metrics, targets))

    def p99_per_model():
        samples = until_numbers(prom_url, P99_QUERY, send)
        by_model = {labels.get("model"): v for labels, v in samples}
        check("mlp" in by_model, "no P99 for mlp: %r" % samples)
        # The requests took more than 0 s and less than the largest bucket.
        check(0 < by_model["mlp"] <= 10, "mlp P99 %g s" % by_model["mlp"])

    def arena_bytes():
        samples = until_numbers(prom_url, ARENA_QUERY)
        models = {labels.get("model"): v for labels, v in samples}
        check(models.get("mlp", 0) > 0 and models.get("cnn", 0) > 0,
              "reserved arena bytes per model %r, want mlp and cnn > 0" % samples)

    return [
        ("prometheus_scrapes_onyxd", target_up),
        ("promql_p99_latency_per_model", p99_per_model),
        ("promql_arena_bytes", arena_bytes),
    ]


def main():
    args = base.parse_args(__doc__)
    binary = shutil.which("prometheus")
    if binary is None:
        print("FAIL prometheus_binary: no `prometheus` binary on PATH "
              "(Debian package prometheus; scripts/install-deps.sh installs it)")
        print("0 passed, 1 failed")
        return 1

    tmp = tempfile.mkdtemp(prefix="onyx_prometheus_")
    onyxd = prom = None
    passed = failed = 0
    try:
        mods = base.stubs_in(args.proto_dir, tmp)
        if mods is None:
            print("0 passed, 1 failed")
            return 1
        onyxd, address, metrics_address, failure = base.launch_onyxd(args.onyxd, args.repo, mods, tmp)
        if failure is not None:
            print("0 passed, 1 failed")
            return 1
        prom, prom_url = start_prometheus(binary, tmp, metrics_address)
        failure = wait_prometheus_ready(prom, prom_url)
        if failure is not None:
            print("FAIL prometheus_startup: %s" % failure)
            print("--- prometheus log (tail) ---\n" + base.tail(os.path.join(tmp, "prometheus.log")))
            print("0 passed, 1 failed")
            return 1
        client = base.Client(mods, address)
        cases = build_cases(client, prom_url, metrics_address)
        passed, failed = base.run_cases(cases, onyxd, os.path.join(tmp, "onyxd.stderr"))
        if failed:
            print("--- prometheus log (tail) ---\n" + base.tail(os.path.join(tmp, "prometheus.log")))
    finally:
        if prom is not None and prom.poll() is None:
            prom.terminate()
            try:
                prom.wait(timeout=10)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        if onyxd is not None:
            failed += base.stop_checked(onyxd, os.path.join(tmp, "onyxd.stderr"))
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
