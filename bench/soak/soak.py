#!/usr/bin/python3
"""Soak: onyxd under steady open-loop load for a long time, with a new model
version loaded every --reload-every seconds and a share of requests cancelled
by the client; reports whether anything was lost, wrong or leaked.

usage: soak.py --onyxd BIN --proto-dir DIR [--minutes 30] [--rate 200]
               [--reload-every 30] [--cancel-fraction 0.1] [--report FILE]

The repository (written to a temporary directory) holds "soak", an MLP
(y = tanh(x W1 + b1) W2, x: FP32 [rows, 64], dynamic batching, latest-1
version policy) and "canary", y = 3 x. Every request carries 1-4 random rows;
its reference is numpy's forward pass. Threads and processes:
  - load: "soak" requests at --rate per second on a fixed schedule (open loop),
    --cancel-fraction of them cancelled by the client 0-5 ms after sending;
  - canary: 20 requests per second to "canary", one at a time;
  - reloader: writes version N+1 of "soak" (same weights) and calls
    RepositoryModelLoad, so version N drains and unloads under traffic;
  - prober (its own process, away from this one's GIL): ServerLive and
    grpc.health Check every 250 ms;
  - sampler: onyxd's RSS, threads and open file descriptors every 5 s.
After the run the load stops, every outstanding RPC is awaited, and the
queue and in-flight gauges are read.

Targets (the exit status is 1 when one is missed): no RPC without exactly one
final status, no wrong answer, no status other than OK (CANCELLED only for
RPCs the client cancelled), canary 100% OK, every reload OK and its version
answering (one version per reload among the answers), ServerLive and
Check within 100 ms, queue and in-flight gauges 0 after the drain, RSS drift
after warm-up (a third of the run, at most 2 minutes) under 2% (median of
the first and of the last sixth of the post-warm-up samples), and threads and file descriptors flat (the same
maximum in the last sixth as in the first; gRPC's executor, timer and event
engine pools start threads on demand and keep some, so their threads count
only past max(4, twice the CPU count) each).
"""
import argparse
import collections
import os
import statistics
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "tests", "reliability"))
import python_client_test as base  # noqa: E402
from ledger import Canceller, Ledger, gauge_sum, sample_process, scrape, threads_beyond_pools  # noqa: E402
from liveness import LivenessProbe  # noqa: E402

IN, HIDDEN, OUT = 64, 128, 16
RPC_TIMEOUT_S = 10.0
PROBE_BOUND_MS = 100.0


def mlp_model(w1, b1, w2):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
         helper.make_node("Tanh", ["hb"], ["t"]), helper.make_node("MatMul", ["t", "w2"], ["y"])],
        "soak", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", OUT])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def canary_model():
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["y"])], "canary",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(np.array([3.0], np.float32), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def run_soak(args, tmp):
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((IN, HIDDEN)) * 0.15).astype(np.float32)
    b1 = (rng.standard_normal(HIDDEN) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, OUT)) * 0.15).astype(np.float32)
    soak_bytes = mlp_model(w1, b1, w2)
    repo = os.path.join(tmp, "repo")
    write(os.path.join(repo, "soak", "1", "model.onnx"), soak_bytes)
    write(os.path.join(repo, "soak", "config.yaml"),
          "max_batch_size: 8\nbuckets: [1, 2, 4, 8]\ndynamic_batching:\n  max_queue_delay_us: 500\n"
          "  max_queue_size: 4096\nversion_policy: {latest: 1}\n")
    write(os.path.join(repo, "canary", "1", "model.onnx"), canary_model())

    mods = base.stubs_in(args.proto_dir, tmp)
    if mods is None:
        return ["cannot generate stubs"], []
    proc, address, metrics_address, failure = base.launch_onyxd(args.onyxd, repo, mods, tmp)
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    problems, lines = [], []
    if failure is not None:
        if proc is not None:
            base.stop(proc)
        return ["onyxd did not start: %s" % failure], []
    try:
        problems, lines = drive(args, mods, proc, address, metrics_address, repo, soak_bytes, (w1, b1, w2), rng)
    finally:
        if base.stop_checked(proc, stderr_path):
            problems.append("onyxd did not exit 0 after SIGTERM (status %s)" % proc.returncode)
    return problems, lines


def drive(args, mods, proc, address, metrics_address, repo, soak_bytes, weights, rng):
    import grpc
    pb = mods["grpc_service_pb2"]
    w1, b1, w2 = weights
    client = base.Client(mods, address)
    ledger = Ledger()
    duration = args.minutes * 60.0
    stop = threading.Event()
    canceller = Canceller()
    canceller.start()

    probe = LivenessProbe(os.path.join(os.path.dirname(repo), "stubs"), address)

    versions, versions_lock = collections.Counter(), threading.Lock()

    def finish(rid, future):
        if future.cancelled():
            ledger.finished(rid, "CANCELLED")
            return
        e = future.exception()
        if e is not None:
            ledger.finished(rid, e.code().name, detail=e.details())
            return
        try:
            response = future.result()
            got = base.output_array(response, "y")
            with versions_lock:
                versions[response.model_version] += 1
        except Exception:  # noqa: BLE001 - a malformed answer is a wrong one
            got = None
        ledger.finished(rid, "OK", got)

    def load():
        period = 1.0 / args.rate
        start = time.monotonic()
        n = 0
        while not stop.is_set():
            at = start + n * period
            now = time.monotonic()
            if at > now:
                time.sleep(at - now)
            rows = int(rng.integers(1, 5))
            x = rng.standard_normal((rows, IN)).astype(np.float32)
            want = np.tanh(x.astype(np.float64) @ w1 + b1) @ w2
            req = client.infer_request("soak", "x", "FP32", [rows, IN], raw=x.tobytes(), outputs=["y"])
            rid = ledger.sent("soak", want)
            future = client.stub.ModelInfer.future(req, timeout=RPC_TIMEOUT_S)
            if rng.random() < args.cancel_fraction:
                ledger.cancel_requested(rid)
                canceller.schedule(time.monotonic() + rng.uniform(0, 0.005), future)
            future.add_done_callback(lambda f, rid=rid: finish(rid, f))
            n += 1

    def canary():
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        while not stop.is_set():
            rid = ledger.sent("canary", 3.0 * x)
            req = client.infer_request("canary", "x", "FP32", [2, 4], raw=x.tobytes(), outputs=["y"])
            try:
                ledger.finished(rid, "OK", base.output_array(client.stub.ModelInfer(req, timeout=RPC_TIMEOUT_S), "y"))
            except grpc.RpcError as e:
                ledger.finished(rid, e.code().name, detail=e.details())
            stop.wait(0.05)

    reloads = []

    def reloader():
        version = 1
        while not stop.wait(args.reload_every):
            version += 1
            write(os.path.join(repo, "soak", str(version), "model.onnx"), soak_bytes)
            t0 = time.monotonic()
            try:
                client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="soak"), timeout=120)
                reloads.append((version, time.monotonic() - t0, None))
            except grpc.RpcError as e:
                reloads.append((version, time.monotonic() - t0, "%s %s" % (e.code(), e.details())))

    samples = []

    def sampler():
        t0 = time.monotonic()
        while True:
            # gRPC's pools start threads on demand and keep some: only threads
            # beyond their bound can be a leak.
            s = sample_process(proc.pid, time.monotonic() - t0)
            samples.append(s._replace(threads=threads_beyond_pools(proc.pid)))
            if stop.wait(5.0):
                return

    threads = [threading.Thread(target=f, daemon=True) for f in (load, canary, reloader, sampler)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
    stop.set()
    for t in threads:
        t.join(timeout=150)
    canceller.done = True
    with canceller.cv:
        canceller.cv.notify()
    drain_deadline = time.monotonic() + RPC_TIMEOUT_S + 5
    while ledger.pending() and time.monotonic() < drain_deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    gauges = scrape(metrics_address) if proc.poll() is None else {}
    probe_result = probe.stop()
    client.channel.close()
    if args.samples_out:
        with open(args.samples_out, "w") as f:
            f.write("seconds,rss_bytes,threads,fds\n")
            f.writelines("%.1f,%d,%d,%d\n" % (s.t, s.rss_bytes, s.threads, s.fds) for s in samples)
    return evaluate(args, ledger, reloads, samples, gauges, probe_result, proc, versions)


def evaluate(args, ledger, reloads, samples, gauges, probe, proc, versions):
    problems = list(ledger.violations(allowed=("OK",)))
    counts = ledger.counts()
    soak_total = sum(n for (m, _), n in counts.items() if m == "soak")
    canary_total = sum(n for (m, _), n in counts.items() if m == "canary")
    canary_ok = counts.get(("canary", "OK"), 0)
    if canary_total == 0 or canary_ok != canary_total:
        problems.append("canary %d of %d OK" % (canary_ok, canary_total))
    failed_reloads = [r for r in reloads if r[2] is not None]
    # Every reload must have put its version in service under the traffic.
    if len(versions) != len(reloads) + 1:
        problems.append("answers came from %d versions after %d reloads" % (len(versions), len(reloads)))
    if failed_reloads:
        problems.append("%d of %d reloads failed (first: version %d: %s)" % (
            len(failed_reloads), len(reloads), failed_reloads[0][0], failed_reloads[0][2]))
    if proc.poll() is not None:
        problems.append("onyxd exited during the soak (status %s)" % proc.returncode)
    lat = probe["latencies_ms"]
    worst_probe = max(lat) if lat else float("inf")
    if probe["failures"]:
        problems.append("probe failures: %s" % probe["failures"][:5])
    if worst_probe > PROBE_BOUND_MS:
        problems.append("slowest ServerLive/Check %.1f ms > %.0f ms" % (worst_probe, PROBE_BOUND_MS))
    queue, inflight = gauge_sum(gauges, "onyx_queue_depth"), gauge_sum(gauges, "onyx_inflight_requests")
    if not gauges or queue != 0 or inflight != 0:
        problems.append("after the drain: queue depth %s, in flight %s" % (queue, inflight))

    warm = [s for s in samples if s.t >= args.warmup_s]
    drift = float("nan")
    if len(warm) >= 6:
        k = max(1, len(warm) // 6)
        first, last = warm[:k], warm[-k:]
        rss0 = statistics.median(s.rss_bytes for s in first)
        rss1 = statistics.median(s.rss_bytes for s in last)
        drift = (rss1 - rss0) / rss0
        if drift >= 0.02:
            problems.append("RSS drift %.2f%% after warm-up (%.1f -> %.1f MB)" % (drift * 100, rss0 / 2**20,
                                                                                  rss1 / 2**20))
        for field in ("threads", "fds"):
            a, b = max(getattr(s, field) for s in first), max(getattr(s, field) for s in last)
            if b > a:
                problems.append("%s grew: %d in the first sixth, %d in the last" % (field, a, b))
    else:
        problems.append("only %d samples after warm-up" % len(warm))

    cancelled = counts.get(("soak", "CANCELLED"), 0)
    reload_s = [r[1] for r in reloads]
    lines = [
        "| duration | %.1f min at %d req/s (1-4 rows each), %.0f%% cancelled by the client, reload every %d s |" % (
            args.minutes, args.rate, args.cancel_fraction * 100, args.reload_every),
        "| requests | %d to soak (%d OK, %d CANCELLED), %d to the canary (%d OK) |" % (
            soak_total, counts.get(("soak", "OK"), 0), cancelled, canary_total, canary_ok),
        "| lost / wrong / unexpected status | %s |" % ("0 / 0 / 0" if not ledger.violations() else
                                                      "; ".join(ledger.violations())),
        "| reloads | %d, %d failed, %.2f-%.2f s each; answers from %d versions |" % (
            len(reloads), len(failed_reloads), min(reload_s, default=0), max(reload_s, default=0), len(versions)),
        "| ServerLive / Check | %d probes, slowest %.1f ms, p99 %.1f ms |" % (
            len(lat), worst_probe if lat else 0, float(np.percentile(lat, 99)) if lat else 0),
        "| RSS after warm-up | %s MB -> %s MB, drift %.2f%% |" % (
            "%.1f" % (warm[0].rss_bytes / 2**20) if warm else "?", "%.1f" % (warm[-1].rss_bytes / 2**20) if warm
            else "?", drift * 100),
        "| RSS over the run (MB, each sixth after warm-up) | %s |" % " ".join(
            "%.1f" % (warm[min(len(warm) - 1, i * max(1, len(warm) // 6))].rss_bytes / 2**20) for i in range(7))
        if warm else "?",
        "| threads (gRPC's pools counted past their bound) / fds | %s / %s (min-max after warm-up) |" % (
            "%d-%d" % (min(s.threads for s in warm), max(s.threads for s in warm)) if warm else "?",
            "%d-%d" % (min(s.fds for s in warm), max(s.fds for s in warm)) if warm else "?"),
        "| after the drain | queue depth %g, in flight %g |" % (queue, inflight),
    ]
    return problems, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyxd", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--reload-every", type=int, default=30)
    ap.add_argument("--cancel-fraction", type=float, default=0.1)
    ap.add_argument("--warmup-s", type=float, default=None, help="default: a third of the run, at most 120 s")
    ap.add_argument("--report", help="append the report table (markdown) to this file")
    ap.add_argument("--samples-out", help="write onyxd's RSS, threads and descriptors every 5 s here (CSV)")
    args = ap.parse_args()
    if args.warmup_s is None:
        args.warmup_s = min(120.0, args.minutes * 20.0)
    with tempfile.TemporaryDirectory(prefix="onyx_soak_") as tmp:
        problems, lines = run_soak(args, tmp)
    table = ["| | |", "|---|---|"] + lines
    print("\n".join(table))
    for p in problems:
        print("FAIL %s" % p)
    verdict = "PASS soak" if not problems else "FAIL soak: %d targets missed" % len(problems)
    print(verdict)
    if args.report:
        with open(args.report, "a") as f:
            f.write("\n".join(table + [""] + ["- %s" % p for p in problems] + [verdict, ""]))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
