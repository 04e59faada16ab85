#!/usr/bin/python3
"""Runs the serving benchmark matrix against one onyxd and prints Markdown tables.

usage: run_matrix.py --onyxd BIN --bench BIN --onyx-load BIN --proto-dir DIR --repo DIR
                     [--seconds S] [--models mlp,resnet] [--concurrency 1,8,64]
                     [--batched mlp:16,mlp:64] [--batched-concurrency 64] [--json FILE]

Starts onyxd on free loopback ports (with the e2e suites' launcher), then, side
by side in one run: the empty unary call (ServerLive, concurrency 1); for each
model and concurrency C, the served load (batch 1 per request) followed at once
by its in-process peers on the same engine session onyxd builds: batch 1 from
C' = min(C, cores) threads, and the batch size the server formed during that
served run (the onyx_batch_rows bucket on /metrics that ran the most rows)
from 1 and C' threads. Then, for each --batched MODEL:B, the same saturation
comparison with requests of B rows each (C = --batched-concurrency) against
the in-process engine at batch B from C' threads (the same batch sizes on both
sides) and at the bucket the server formed. ModelStatistics deltas give the server's own per-request split
(compute_input = parse, queue = batcher wait, compute_infer = the batch's
engine run, compute_output = reply), and /proc the CPU onyxd used (the
client reports its own). Last, --rounds interleaved rounds of (empty call,
served C=1, in-process batch 1) per model give the added latency as the
median of the per-round differences. onyxd is stopped at the end; exits non-zero if any run failed.

The served and empty-call loads are closed loops of onyx-load (loadtest/,
--json; one client thread, as the in-process peers' threads are counted);
onyx_serving_bench runs only the in-process engine.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
import python_client_test as e2e  # noqa: E402  (launch_onyxd, stubs_in, stop)

CORES = os.cpu_count() or 1
BUCKET_BOUNDS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # onyx_batch_rows buckets


def proc_cpu_s(pid):
    """User + system CPU seconds of process `pid` so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench(binary, *args):
    start = time.monotonic()
    res = subprocess.run([binary] + [str(a) for a in args], capture_output=True, text=True, timeout=300)
    line = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else "{}"
    out = json.loads(line)
    out["wall_s"] = time.monotonic() - start
    if res.returncode != 0:
        raise RuntimeError("%s %s failed (%d): %s %s" % (os.path.basename(binary), " ".join(map(str, args)),
                                                        res.returncode, res.stderr.strip(),
                                                        out.get("first_error", "")))
    return out


def load(onyx_load, address, model, concurrency, batch, seconds, warmup):
    """A closed loop of onyx-load (ServerLive when model is None), as the dict
    the tables read: items and rows per second, mean/P50/P99/P99.9/max µs,
    errors, and the client's CPU seconds over the run's wall time."""
    with tempfile.TemporaryDirectory(prefix="onyx_bench_load_") as tmp:
        path = os.path.join(tmp, "run.json")
        what = ["--empty"] if model is None else ["--model", model, "--batch", batch]
        cmd = [onyx_load, "--quiet", "--target", address, "--concurrency", concurrency, "--threads", 1,
               "--duration", "%gs" % seconds, "--warmup", "%gs" % warmup, "--json", path] + what
        start = time.monotonic()
        res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300)
        wall = time.monotonic() - start
        if res.returncode not in (0, 3) or not os.path.exists(path):  # 3: unstable, still numbers
            raise RuntimeError("onyx-load %s failed (%d): %s" % (" ".join(map(str, cmd[1:])), res.returncode,
                                                                res.stderr.strip() or res.stdout[-300:]))
        with open(path) as f:
            level = json.load(f)["levels"][0]
    m = level["all"]
    if m["failed"]:
        raise RuntimeError("onyx-load: %d failed calls: %s" % (m["failed"], m["errors"]))
    q = m["response"]["percentiles_ns"]
    rows = 1 if model is None else batch
    return {"concurrency": concurrency, "batch": batch, "items": m["ok"], "items_per_s": m["throughput"],
            "rows_per_s": m["throughput"] * rows, "mean_us": m["response"]["mean_ns"] / 1e3,
            "p50_us": q["p50"] / 1e3, "p99_us": q["p99"] / 1e3, "p999_us": q["p99.9"] / 1e3,
            "max_us": m["response"]["max_ns"] / 1e3, "errors": m["failed"],
            "process_cpu_s": level["cpu_share"] * wall, "wall_s": wall}


def scrape_batch_rows(metrics_address, model):
    """(cumulative counts per bucket bound, sum, count) of onyx_batch_rows{model}."""
    text = urllib.request.urlopen("http://%s/metrics" % metrics_address, timeout=10).read().decode()
    cumulative, total, count = {}, 0.0, 0.0
    label = 'model="%s"' % model
    for line in text.splitlines():
        if not line.startswith("onyx_batch_rows") or label not in line:
            continue
        name, value = line.rsplit(" ", 1)
        if name.startswith("onyx_batch_rows_bucket"):
            le = name.split('le="')[1].split('"')[0]
            cumulative[le] = float(value)
        elif name.startswith("onyx_batch_rows_sum"):
            total = float(value)
        elif name.startswith("onyx_batch_rows_count"):
            count = float(value)
    return cumulative, total, count


def formed_batches(before, after):
    """Mean rows per engine run, and the bucket that ran the most rows, between two scrapes."""
    runs = after[2] - before[2]
    if runs <= 0:
        return 0.0, 1, {}
    per_bin, prev = {}, 0.0
    for bound in BUCKET_BOUNDS:
        key = "%g" % bound
        cum = after[0].get(key, 0.0) - before[0].get(key, 0.0)
        per_bin[bound] = cum - prev
        prev = cum
    # The bucket that ran the most rows (bins are the buckets: powers of two).
    modal = max(per_bin, key=lambda b: per_bin[b] * b)
    return (after[1] - before[1]) / runs, modal, {b: int(n) for b, n in per_bin.items() if n > 0}


def model_stats(stub, pb, model):
    s = stub.ModelStatistics(pb.ModelStatisticsRequest(name=model), timeout=10).model_stats[0]
    i = s.inference_stats
    return {k: (getattr(i, k).count, getattr(i, k).ns)
            for k in ("success", "queue", "compute_input", "compute_infer", "compute_output")}


def stats_delta_us(before, after):
    """Mean microseconds per request of each statistic between two snapshots."""
    out = {}
    for k in before:
        n = after[k][0] - before[k][0]
        out[k] = (after[k][1] - before[k][1]) / n / 1000.0 if n else 0.0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyxd", required=True)
    ap.add_argument("--bench", required=True, help="onyx_serving_bench (the in-process engine runs)")
    ap.add_argument("--onyx-load", required=True, help="onyx-load (the served and empty-call loads)")
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--models", default="mlp,resnet")
    ap.add_argument("--concurrency", default="1,8,64")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds of (empty, served C=1, in-process b=1) per model for the added latency")
    ap.add_argument("--batched", default="mlp:16,mlp:64",
                    help="MODEL:ROWS pairs served with ROWS rows per request ('' for none)")
    ap.add_argument("--batched-concurrency", type=int, default=64)
    ap.add_argument("--json", help="also write every run's numbers here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="onyx_bench_serving_") as tmp:
        return run(args, tmp)


def run(args, tmp):
    """The whole matrix against one onyxd whose stubs and logs live in tmp."""
    mods = e2e.stubs_in(args.proto_dir, tmp)
    if mods is None:
        return 1
    proc, address, metrics_address, failure = e2e.launch_onyxd(args.onyxd, args.repo, mods, tmp)
    if failure is not None:
        if proc is not None:
            e2e.stop(proc)
        return 1
    import grpc
    pb = mods["grpc_service_pb2"]
    channel = grpc.insecure_channel(address)
    stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
    secs = ["--seconds", args.seconds, "--warmup", 0.5]
    L = lambda model, c, batch=1, seconds=args.seconds, warmup=0.5: load(args.onyx_load, address, model, c, batch,
                                                                        seconds, warmup)
    results = {"cores": CORES, "seconds": args.seconds, "runs": []}
    try:
        results["empty"] = L(None, 1)
        # The gRPC ceiling at saturation: empty calls from the same client at the
        # highest concurrency (no served request can complete faster).
        top = max(map(int, args.concurrency.split(",")))
        results["empty_top"] = L(None, top)
        for model in args.models.split(","):
            path = os.path.join(args.repo, model, "1", "model.onnx")
            for c in map(int, args.concurrency.split(",")):
                threads = min(c, CORES)
                rows0, stats0 = scrape_batch_rows(metrics_address, model), model_stats(stub, pb, model)
                cpu0 = proc_cpu_s(proc.pid)
                served = L(model, c)
                server_cpu = proc_cpu_s(proc.pid) - cpu0
                rows1, stats1 = scrape_batch_rows(metrics_address, model), model_stats(stub, pb, model)
                mean_rows, modal, hist = formed_batches(rows0, rows1)
                run = {"model": model, "concurrency": c, "served": served, "mean_rows": mean_rows,
                       "modal_bucket": modal, "rows_histogram": hist,
                       "server_us": stats_delta_us(stats0, stats1),
                       "server_cores": server_cpu / served["wall_s"],
                       "client_cores": served["process_cpu_s"] / served["wall_s"]}
                run["engine_b1"] = bench(args.bench, "engine", "--model-file", path, "--batch", 1,
                                         "--threads", threads, *secs)
                if modal > 1:
                    run["engine_formed_1t"] = bench(args.bench, "engine", "--model-file", path,
                                                    "--batch", modal, "--threads", 1, *secs)
                    if threads > 1:
                        run["engine_formed"] = bench(args.bench, "engine", "--model-file", path,
                                                     "--batch", modal, "--threads", threads, *secs)
                results["runs"].append(run)
                sys.stderr.write("done %s C=%d\n" % (model, c))
        results["batched"] = []
        for spec in filter(None, args.batched.split(",")):
            model, batch = spec.split(":")
            batch, c = int(batch), args.batched_concurrency
            if model not in args.models.split(","):
                continue
            path = os.path.join(args.repo, model, "1", "model.onnx")
            threads = min(c, CORES)
            rows0, stats0 = scrape_batch_rows(metrics_address, model), model_stats(stub, pb, model)
            cpu0 = proc_cpu_s(proc.pid)
            served = L(model, c, batch)
            server_cpu = proc_cpu_s(proc.pid) - cpu0
            rows1, stats1 = scrape_batch_rows(metrics_address, model), model_stats(stub, pb, model)
            mean_rows, modal, hist = formed_batches(rows0, rows1)
            run = {"model": model, "batch": batch, "concurrency": c, "served": served,
                   "mean_rows": mean_rows, "modal_bucket": modal, "rows_histogram": hist,
                   "server_us": stats_delta_us(stats0, stats1),
                   "server_cores": server_cpu / served["wall_s"],
                   "client_cores": served["process_cpu_s"] / served["wall_s"]}
            run["engine_same"] = bench(args.bench, "engine", "--model-file", path, "--batch", batch,
                                       "--threads", threads, *secs)
            if modal != batch:
                run["engine_formed"] = bench(args.bench, "engine", "--model-file", path,
                                             "--batch", modal, "--threads", threads, *secs)
            results["batched"].append(run)
            sys.stderr.write("done %s batch %d C=%d\n" % (model, batch, c))
        # Added latency is a difference of medians a few tens of µs apart, so
        # its three terms are measured in short interleaved rounds and the
        # median of the per-round differences is reported.
        short_s = max(1.0, args.seconds / 3)
        short = ["--seconds", short_s, "--warmup", 0.3]
        results["added"] = {}
        for model in args.models.split(","):
            path = os.path.join(args.repo, model, "1", "model.onnx")
            rounds = []
            for _ in range(args.rounds):
                empty = L(None, 1, 1, short_s, 0.3)["p50_us"]
                served = L(model, 1, 1, short_s, 0.3)["p50_us"]
                engine = bench(args.bench, "engine", "--model-file", path, "--batch", 1, *short)["p50_us"]
                rounds.append({"empty": empty, "served": served, "engine": engine,
                               "added": served - engine - empty})
            results["added"][model] = rounds
            sys.stderr.write("done added latency %s\n" % model)
    finally:
        channel.close()
        e2e.stop(proc)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print_tables(results)
    return 0


def print_tables(r):
    empty = r["empty"]
    print("Empty unary call (ServerLive), concurrency 1: P50 %.1f µs, P99 %.1f µs, %.0f calls/s"
          % (empty["p50_us"], empty["p99_us"], empty["items_per_s"]))
    if r.get("empty_top"):
        top = r["empty_top"]
        print("Empty unary call, concurrency %d: %.0f calls/s, P50 %.1f µs (the gRPC ceiling for "
              "requests of any size)" % (top["concurrency"], top["items_per_s"], top["p50_us"]))
    print()
    print("| model | C | served rows/s | served P50 / P99 µs | rows per engine run (main bucket) "
          "| in-process b=1, C' thr: rows/s, P50 / P99 µs | in-process b=main, 1 thr: rows/s, P50 µs "
          "| in-process b=main, C' thr: rows/s, P50 µs | served / in-process, same batch and threads "
          "| served / best in-process |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in r["runs"]:
        s, e1 = run["served"], run["engine_b1"]
        f1, fc = run.get("engine_formed_1t"), run.get("engine_formed")
        best = max(x["rows_per_s"] for x in (e1, f1, fc) if x)
        same = fc or f1 or e1
        cell = lambda x: "%.0f, %.1f" % (x["rows_per_s"], x["p50_us"]) if x else "—"
        print("| %s | %d | %.0f | %.1f / %.1f | %.2f (%d) | %.0f (C'=%d), %.1f / %.1f | %s | %s | %.0f%% | %.0f%% |" % (
            run["model"], run["concurrency"], s["rows_per_s"], s["p50_us"], s["p99_us"],
            run["mean_rows"], run["modal_bucket"], e1["rows_per_s"], e1["concurrency"], e1["p50_us"],
            e1["p99_us"], cell(f1), cell(fc), 100.0 * s["rows_per_s"] / same["rows_per_s"],
            100.0 * s["rows_per_s"] / best))
    print("\nServer-side split per request (ModelStatistics deltas, mean µs) vs the client's mean:\n")
    print("| model | C | client mean | server total | compute_input (parse) | queue | compute_infer "
          "| compute_output (reply) | client − server total | cores used: server / client |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in r["runs"]:
        u, s = run["server_us"], run["served"]
        print("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f / %.2f |" % (
            run["model"], run["concurrency"], s["mean_us"], u["success"], u["compute_input"],
            u["queue"], u["compute_infer"], u["compute_output"], s["mean_us"] - u["success"],
            run["server_cores"], run["client_cores"]))
    if r.get("batched"):
        print("\nSaturation with batched requests (B rows per request), against the in-process engine "
              "at the same batch B from C' threads, and at the bucket the server formed:\n")
        print("| model | rows per request | C | served rows/s | served P50 / P99 µs "
              "| rows per engine run (main bucket) | in-process b=B, C' thr: rows/s, P50 µs "
              "| in-process b=main, C' thr: rows/s, P50 µs | served / in-process, same batch "
              "| served / best in-process | cores used: server / client |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for run in r["batched"]:
            s, e, f = run["served"], run["engine_same"], run.get("engine_formed")
            best = max(x["rows_per_s"] for x in (e, f) if x)
            cell = lambda x: "%.0f, %.1f" % (x["rows_per_s"], x["p50_us"]) if x else "—"
            print("| %s | %d | %d | %.0f | %.1f / %.1f | %.2f (%d) | %s (C'=%d) | %s | %.0f%% | %.0f%% | %.2f / %.2f |" % (
                run["model"], run["batch"], run["concurrency"], s["rows_per_s"], s["p50_us"],
                s["p99_us"], run["mean_rows"], run["modal_bucket"], cell(e), e["concurrency"],
                cell(f), 100.0 * s["rows_per_s"] / e["rows_per_s"], 100.0 * s["rows_per_s"] / best,
                run["server_cores"], run["client_cores"]))
    print("\nAdded latency at concurrency 1 = served P50 − in-process P50 (batch 1, 1 thread) − empty-call P50:\n")
    for run in r["runs"]:
        if run["concurrency"] != 1:
            continue
        added = run["served"]["p50_us"] - run["engine_b1"]["p50_us"] - empty["p50_us"]
        print("- %s, matrix run: %.1f − %.1f − %.1f = %.1f µs" % (run["model"], run["served"]["p50_us"],
                                                              run["engine_b1"]["p50_us"], empty["p50_us"], added))
    for model, rounds in r.get("added", {}).items():
        values = sorted(x["added"] for x in rounds)
        print("- %s, %d interleaved rounds: median **%.1f µs** (min %.1f, max %.1f; rounds: %s)" % (
            model, len(values), values[len(values) // 2], values[0], values[-1],
            ", ".join("%.0f−%.0f−%.0f" % (x["served"], x["engine"], x["empty"]) for x in rounds)))


if __name__ == "__main__":
    sys.exit(main())
