#!/usr/bin/python3
"""onyx-load's behaviour against the fake server (loadtest/testing/fake_server.cc).

usage: fake_server_test.py --onyx-load BIN --fake-server BIN [--case NAME ...]

Sweeps, ramps, --find-max, every exit code, error grouping, --streaming,
the weighted model mix, --connections (counted as TCP connections in
/proc/net/tcp and tcp6), replicas, --validate, --trace and compare. Each case's bounds are
generous: the machine is shared, and a case checks what onyx-load counts and
decides, not how fast the machine is.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

import load_harness as h

ARGS = None


def fake(*args):
    return h.FakeServer(ARGS.fake_server, *args)


def load(server, *args, **kw):
    return h.run_load(ARGS.onyx_load, ["--target", server.address, "--max-late-share", "100%"] + list(args), **kw)


def with_server(server_args, fn):
    server = fake(*server_args)
    try:
        return fn(server)
    finally:
        server.stop()


def rate_sweep():
    def body(s):
        run = load(s, "--model", "fake", "--rate", "200:600:+200", "--duration", "2s", "--warmup", "0.5s")
        if run.rc != 0 or run.report is None:
            return run.describe()
        levels = run.report["levels"]
        if [l["target_rate"] for l in levels] != [200, 400, 600]:
            return "levels %s" % [l["label"] for l in levels]
        for l in levels:
            if not h.within(l["all"]["throughput"], l["target_rate"], 0.05):
                return "%s: throughput %.1f" % (l["label"], l["all"]["throughput"])
            if l["all"]["intended"] != 2 * l["target_rate"]:
                return "%s: %d requests intended in 2 s" % (l["label"], l["all"]["intended"])
        return None
    return with_server(["--latency", "200us"], body)


def concurrency_sweep():
    def body(s):
        run = load(s, "--model", "fake", "--concurrency", "1:4:x2", "--duration", "1s", "--warmup", "0.2s")
        if run.rc != 0 or run.report is None:
            return run.describe()
        levels = run.report["levels"]
        if [(l["open_loop"], l["concurrency"]) for l in levels] != [(False, 1), (False, 2), (False, 4)]:
            return "levels %s" % [l["label"] for l in levels]
        # Closed loop: a call is intended when the previous one completed, so response and
        # service time differ only by the client's own few microseconds between the two.
        for l in levels:
            r, s = l["all"]["response"]["max_ns"], l["all"]["service"]["max_ns"]
            if l["all"]["ok"] < 100 or not 0 <= r - s <= max(0.02 * s, 500e3):
                return "%s: ok %d, response max %d vs service max %d" % (
                    l["label"], l["all"]["ok"], l["all"]["response"]["max_ns"], l["all"]["service"]["max_ns"])
        return None
    return with_server(["--latency", "2ms"], body)


def step_and_linear_ramps():
    def body(s):
        run = load(s, "--model", "fake", "--ramp", "step:200:600:+200:1.5s", "--warmup", "0.5s")
        if run.rc != 0 or run.report is None:
            return "step: " + run.describe()
        levels = run.report["levels"]
        if [l["target_rate"] for l in levels] != [200, 400, 600]:
            return "step levels %s" % [l["label"] for l in levels]
        for l in levels:
            if l["all"]["intended"] != round(1.5 * l["target_rate"]):
                return "step %s: %d intended" % (l["label"], l["all"]["intended"])
        # One phase: the levels follow each other without a gap.
        if not all(abs(levels[i + 1]["start_s"] - levels[i]["start_s"] - 1.5) < 1e-6 for i in range(2)):
            return "step levels are not back to back: %s" % [l["start_s"] for l in levels]
        run = load(s, "--model", "fake", "--ramp", "linear:100:500", "--duration", "4s", "--warmup", "0.5s")
        if run.rc != 0 or run.report is None:
            return "linear: " + run.describe()
        l = run.level()
        if abs(l["all"]["intended"] - 1200) > 2:  # (100 + 500) / 2 x 4 s
            return "linear ramp: %d intended, want 1200" % l["all"]["intended"]
        targets = [w["target_rate"] for w in run.report["windows"] if w["level"] == 0]
        if len(targets) < 3 or targets != sorted(targets) or targets[-1] <= targets[0] + 200:
            return "linear ramp: window target rates %s do not rise" % targets
        return None
    return with_server(["--latency", "200us"], body)


def find_max():
    def body(s):
        # --serial 1 with 2 ms per request: a single-server queue of capacity 500/s.
        run = load(s, "--model", "fake", "--find-max", "--slo", "p99<40ms,err<1%", "--rate", "100",
                   "--find-max-precision", "0.15", "--duration", "2s", "--warmup", "1s", timeout=200)
        if run.rc != 0 or run.report is None:
            return run.describe()
        fm = run.report["find_max"]
        probes = [(l["target_rate"], l["slo_met"]) for l in run.report["levels"]]
        print("  probes %s -> %s/s" % (probes, fm["max_rate"]))
        if not fm["found"] or not 200 <= fm["max_rate"] <= 520:
            return "max rate %s outside [200, 520] (capacity 500/s); probes %s" % (fm["max_rate"], probes)
        if not any(not met for _, met in probes):
            return "no probe missed the SLO: the search never bracketed the maximum"
        if run.report["levels"][fm["level"]]["target_rate"] != fm["max_rate"]:
            return "find_max.level does not point at the maximum's probe"
        # Nothing meets an impossible SLO: exit 1 (assertion failed).
        run = load(s, "--model", "fake", "--find-max", "--slo", "p99<1us", "--rate", "20:40:+20", "--duration",
                   "1s", "--warmup", "0.2s")
        if run.rc != 1 or run.report["find_max"]["found"]:
            return "impossible SLO: " + run.describe()
        return None
    return with_server(["--latency", "2ms", "--serial", "1"], body)


def exit_codes():
    problems = []

    def expect(name, run, code, text=None):
        if run.rc != code or (text and text not in run.stdout + run.stderr):
            problems.append("%s: want exit %d%s, got %s" % (name, code, " and %r" % text if text else "",
                                                            run.describe()))

    server = fake("--latency", "200us")
    try:
        expect("ok", load(server, "--model", "fake", "--rate", "200", "--duration", "1s", "--warmup", "0.2s"), 0)
        expect("assert", load(server, "--model", "fake", "--rate", "200", "--duration", "1s", "--assert",
                              "p99<1us"), 1, "assert p99<1us FAILED")
        expect("usage", load(server, "--model", "fake", "--threads", "0"), 2, "--threads: expected an integer")
        expect("unknown model", load(server, "--model", "nope", "--rate", "10"), 2, "unknown model 'nope'")
        # 1,000,000/s from one thread cannot be sent on time on any machine.
        expect("saturated", h.run_load(ARGS.onyx_load, ["--target", server.address, "--model", "fake", "--rate",
                                                        "1000000", "--duration", "1s", "--warmup", "0s",
                                                        "--timeout", "5s"]), 4, "SATURATED")
    finally:
        server.stop()
    # A single-server queue of 500/s offered 800/s falls further behind every second.
    server = fake("--latency", "2ms", "--serial", "1")
    try:
        expect("unstable", load(server, "--model", "fake", "--rate", "800", "--duration", "6s", "--warmup", "0s"),
               3, "UNSTABLE")
    finally:
        server.stop()
    server = fake("--latency", "200us", "--error-every", "1")
    try:
        expect("all unavailable", load(server, "--model", "fake", "--rate", "100", "--duration", "1s"), 5,
               "every request failed with UNAVAILABLE")
    finally:
        server.stop()
    closed = fake()
    address = closed.address
    closed.stop()
    expect("unreachable", h.run_load(ARGS.onyx_load, ["--target", address, "--model", "fake", "--connect-timeout",
                                                      "1s"]), 5, "cannot connect to " + address)
    return "; ".join(problems) or None


def error_groups():
    def body(s):
        run = load(s, "--model", "fake", "--rate", "500", "--duration", "2s", "--warmup", "0.2s",
                   "--assert", "err<0.1%")
        if run.rc != 1 or run.report is None:
            return run.describe()
        m = run.level()["all"]
        share = m["error_share"]
        groups = m["errors"]
        if not 0.08 <= share <= 0.12 or groups[0]["code"] != "UNAVAILABLE" or \
                groups[0]["messages"][0]["message"] != "fake: planned failure":
            return "error share %.3f, groups %s" % (share, groups)
        if 'UNAVAILABLE x' not in run.stdout or "fake: planned failure" not in run.stdout:
            return "text summary lacks the error group: " + run.stdout[-500:]
        return None
    return with_server(["--latency", "200us", "--error-every", "10"], body)


def streaming():
    def body(s):
        run = load(s, "--model", "fake", "--streaming", "--rate", "400", "--duration", "2s", "--warmup", "0.2s",
                   "--connections", "2")
        if run.rc != 0 or run.report is None:
            return run.describe()
        m = run.level()["all"]
        if m["ok"] != 800 or m["failed"]:
            return "streaming: ok %d failed %d of 800" % (m["ok"], m["failed"])
        if m["service"]["percentiles_ns"]["p50"] < 2e6:
            return "service p50 %s is below the server's 2 ms" % h.ms(m["service"]["percentiles_ns"]["p50"])
        return None
    return with_server(["--latency", "2ms"], body)


def streaming_errors():
    def body(s):
        run = load(s, "--model", "fake", "--streaming", "--rate", "400", "--duration", "1s", "--warmup", "0s")
        m = run.level()["all"]
        if m["failed"] != 80 or m["errors"][0]["messages"][0]["message"] != "fake: planned failure":
            return "streamed errors: failed %d (want 80 of 400), groups %s" % (m["failed"], m["errors"])
        return None
    return with_server(["--latency", "200us", "--error-every", "5"], body)


def model_mix():
    def body(s):
        run = load(s, "--model", "a@3", "--model", "b@1", "--rate", "1000", "--duration", "3s", "--warmup", "0s")
        if run.rc != 0 or run.report is None:
            return run.describe()
        models = {m["model"]: m for m in run.level()["models"]}
        a, b = models["a"]["intended"], models["b"]["intended"]
        if a + b != 3000 or not h.within(a / b, 3, 0.15):
            return "mix a=%d b=%d, want 3:1 of 3000" % (a, b)
        if run.level()["all"]["ok"] != models["a"]["ok"] + models["b"]["ok"]:
            return "combined ok is not the sum of the models'"
        if "model a:" not in run.stdout or "model b:" not in run.stdout:
            return "text summary lacks per-model blocks"
        return None
    return with_server(["--latency", "200us", "--model", "a,b"], body)


def established_to(port):
    """Client-side ESTABLISHED TCP connections to 127.0.0.1:port (/proc/net/tcp)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):  # gRPC may use IPv4-mapped IPv6 sockets
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                remote, state = fields[2], fields[3]
                if state == "01" and int(remote.rsplit(":", 1)[1], 16) == port:
                    count += 1
    return count


def connections():
    problems = []
    for n in (1, 4):
        server = fake("--latency", "1ms")
        try:
            seen = []
            result = {}
            t = threading.Thread(target=lambda: result.update(run=load(server, "--model", "fake", "--rate", "200",
                                                                       "--duration", "3s", "--warmup", "0s",
                                                                       "--connections", n)))
            t.start()
            time.sleep(2)
            seen.append(established_to(server.port))
            t.join()
            if result["run"].rc != 0:
                problems.append(result["run"].describe())
            if seen[0] != n:
                problems.append("--connections %d: %d TCP connections open to the server" % (n, seen[0]))
        finally:
            server.stop()
    return "; ".join(problems) or None


def replicas():
    a, b = fake("--latency", "200us"), fake("--latency", "200us")
    try:
        run = h.run_load(ARGS.onyx_load, ["--target", a.address, "--target", b.address, "--model", "fake",
                                          "--rate", "400", "--duration", "2s", "--warmup", "0s",
                                          "--max-late-share", "100%"])
        if run.rc != 0 or run.report is None:
            return run.describe()
        peers = run.level()["calls_per_peer"]
        counts = [peers.get("ipv4:" + x.address, 0) for x in (a, b)]
        if sum(counts) != 800 or min(counts) < 300:
            return "calls per backend %s (want both of 800, evenly)" % peers
        return None
    finally:
        a.stop()
        b.stop()


def npy(path, values):
    import numpy as np
    np.save(path, np.array(values, dtype=np.float32))


def validate():
    def body(s):
        with tempfile.TemporaryDirectory() as tmp:
            npy(os.path.join(tmp, "input.npy"), [[1, 2, 3, 4]])
            npy(os.path.join(tmp, "output.npy"), [[1, 2, 3, 4]])  # the fake echoes its input
            run = load(s, "--model", "fake", "--input-data", tmp, "--validate", "--rate", "100", "--duration", "1s",
                       "--warmup", "0s")
            if run.rc != 0 or run.level()["all"]["ok"] != 100:
                return "matching outputs: " + run.describe()
            npy(os.path.join(tmp, "output.npy"), [[1, 2, 3, 5]])
            run = load(s, "--model", "fake", "--input-data", tmp, "--validate", "--rate", "100", "--duration", "1s",
                       "--warmup", "0s")
            groups = run.level()["all"]["errors"]
            if run.level()["all"]["ok"] != 0 or not groups or groups[0]["code"] != "OUTPUT_MISMATCH" or \
                    "element 3" not in groups[0]["messages"][0]["message"]:
                return "mismatching outputs were not reported: %s" % groups
            run = load(s, "--model", "fake", "--validate", "--rate", "10")
            if run.rc != 2 or "--validate" not in run.stderr:
                return "--validate with random inputs: " + run.describe()
        return None
    return with_server(["--latency", "200us"], body)


def trace_and_compare():
    def body(s):
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "t.csv")
            a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            run = load(s, "--model", "fake", "--rate", "300", "--duration", "1s", "--warmup", "0.5s", "--trace",
                       trace, json_report=False)
            with open(trace) as f:
                lines = f.read().splitlines()
            measured = [x for x in lines[1:] if not x.startswith("-1,")]
            if lines[0].split(",")[:3] != ["level", "model", "intended_us"] or len(lines) != 451 or \
                    len(measured) != 300:
                return "trace: %d lines (%d measured), header %s" % (len(lines), len(measured), lines[0])
            for path, rate in ((a, 200), (b, 400)):
                r = load(s, "--model", "fake", "--rate", rate, "--duration", "1s", "--warmup", "0s", "--json", path,
                         json_report=False)
                if r.rc != 0:
                    return r.describe()
            html = os.path.join(tmp, "c.html")
            res = subprocess.run([ARGS.onyx_load, "compare", a, b, "--html", html], capture_output=True, text=True)
            if res.returncode != 0 or "throughput/s" not in res.stdout or "+100.0%" not in res.stdout:
                return "compare: exit %d: %s %s" % (res.returncode, res.stdout, res.stderr)
            with open(html) as f:
                page = f.read()
            if page.count("<polyline class=\"series\"") < 4 or "<script" in page:
                return "compare --html lacks its curves"
            res = subprocess.run([ARGS.onyx_load, "compare", a, trace], capture_output=True, text=True)
            if res.returncode != 2 or "t.csv" not in res.stderr:
                return "compare of a non-report: exit %d %s" % (res.returncode, res.stderr)
        return None
    return with_server(["--latency", "200us"], body)


def drain_timeout_and_deadline():
    def body(s):
        # The server stalls 20 s from 0.5 s on; the level ends at 2 s.
        run = load(s, "--model", "fake", "--rate", "100", "--duration", "1.5s", "--warmup", "0s", "--drain-timeout",
                   "1s")
        m = run.level()["all"] if run.report else None
        if m is None or run.seconds > 10 or m["failed"] < 90 or m["errors"][0]["code"] != "CANCELLED":
            return "stalled requests were not cancelled after --drain-timeout (%.1fs): %s" % (run.seconds, run.describe())
        if "cancelled" not in run.stdout:
            return "no note says requests were cancelled"
        run = load(s, "--model", "fake", "--rate", "100", "--duration", "1s", "--warmup", "0s", "--timeout", "200ms")
        m = run.level()["all"]
        if m["errors"][0]["code"] != "DEADLINE_EXCEEDED" or m["failed"] < 90:
            return "--timeout 200ms during the stall: %s" % m["errors"]
        return None
    return with_server(["--latency", "200us", "--pause-at", "0.5s", "--pause-for", "20s"], body)


def budgets_overflow_poisson():
    def body(s):
        run = load(s, "--model", "fake", "--concurrency", "4", "--requests", "500", "--warmup", "0.2s")
        m = run.level()["all"] if run.report else None
        if m is None or run.rc != 0 or m["intended"] != 500 or m["ok"] != 500:
            return "--requests 500: " + run.describe()
        # 10 ms per request and one allowed in flight: about 100/s get through, the rest of 400/s drop.
        run = load(s, "--model", "fake", "--rate", "400", "--duration", "2s", "--warmup", "0s", "--max-inflight", "1",
                   "--overflow", "drop")
        m = run.level()["all"]
        if m["intended"] != 800 or not 500 <= m["dropped"] <= 780 or m["ok"] + m["dropped"] != 800 or \
                abs(m["error_share"] - m["dropped"] / 800) > 1e-9:
            return "--overflow drop: intended %d ok %d dropped %d error share %.3f" % (
                m["intended"], m["ok"], m["dropped"], m["error_share"])
        run = load(s, "--model", "fake", "--rate", "500", "--duration", "4s", "--warmup", "0s", "--arrival", "poisson",
                   "--seed", "5")
        n = run.level()["all"]["intended"]
        if not 1800 <= n <= 2200:  # 2000 expected, sd 45
            return "poisson: %d requests intended, want ~2000" % n
        again = load(s, "--model", "fake", "--rate", "500", "--duration", "4s", "--warmup", "0s", "--arrival",
                     "poisson", "--seed", "5").level()["all"]["intended"]
        if again != n:
            return "poisson with the same seed intended %d, then %d" % (n, again)
        return None
    return with_server(["--latency", "10ms"], body)


CASES = [
    ("rate_sweep", rate_sweep),
    ("concurrency_sweep", concurrency_sweep),
    ("step_and_linear_ramps", step_and_linear_ramps),
    ("find_max", find_max),
    ("exit_codes", exit_codes),
    ("error_groups", error_groups),
    ("streaming", streaming),
    ("streaming_errors", streaming_errors),
    ("model_mix", model_mix),
    ("connections", connections),
    ("replicas", replicas),
    ("validate", validate),
    ("trace_and_compare", trace_and_compare),
    ("drain_timeout_and_deadline", drain_timeout_and_deadline),
    ("budgets_overflow_poisson", budgets_overflow_poisson),
]


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyx-load", required=True)
    ap.add_argument("--fake-server", required=True)
    ap.add_argument("--case", action="append")
    ARGS = ap.parse_args()
    return h.run_cases(CASES, ARGS.case)


if __name__ == "__main__":
    sys.exit(main())
