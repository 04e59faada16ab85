#!/usr/bin/python3
"""End-to-end test of onyxd's /metrics and its admin service over loopback.

usage: metrics_test.py --onyxd BIN --proto-dir DIR --repo DIR --onyx CLI

Starts BIN against REPO (the demo repository) with stubs generated as
python_client_test.py does, then:
  1. sends a known set of requests (OK, INVALID_ARGUMENT, NOT_FOUND) and checks
     the exact request counters, and that every latency histogram (total,
     queue, compute) has _count equal to the requests served, a positive
     _sum and cumulative buckets ending at _count;
  2. at rest the queue depth and in-flight gauges are 0, every model is READY
     with a positive load duration, RSS is positive, build info is present,
     per-kernel histograms are exported; each demo model version (mlp, cnn
     version 1) has its own arena series (device, model, version) with
     reserved >= in use >= 0, allocations > 0 and 21 bins x 2 states, the
     shared arena none; traffic to mlp moves only mlp's allocation counter;
  3. the CPU-fallback, partition and Memcpy gauges of every bucket equal what
     `onyx inspect` reports for the model file;
  4. `promtool check metrics` accepts the scraped text without any finding;
  5. onyx.admin.v1.Admin/ProfileModel for N runs, while requests flow, returns
     a Chrome trace that parses as JSON with exactly N "run" events; bad
     arguments get INVALID_ARGUMENT / NOT_FOUND; DumpArenas returns every
     model version's arena accounting, headed by device and group.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed";
exits non-zero on any failure. onyxd is always stopped.
"""

import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402  stubs, server start/stop, cases

check = base.check
OK_REQUESTS = 5
BAD_REQUESTS = 3
UNKNOWN_REQUESTS = 2
PROFILED_RUNS = 3
MAX_EXTRA_REQUESTS = 200  # sent while waiting for ProfileModel to answer
TOP_NODES = 5             # kTopNodes in server/observability/model_collector.h


# ------------------------------------------------------------ exposition

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """[(name, {label: value}, float)] of every sample in a text exposition."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m is None:
            raise base.CaseFailure("unparsable exposition line %r" % line)
        labels = dict(LABEL.findall(m.group(2) or ""))
        samples.append((m.group(1), labels, float(m.group(3))))
    return samples


def scrape(metrics_address):
    with urllib.request.urlopen("http://%s/metrics" % metrics_address, timeout=10) as r:
        return r.read().decode()


def select(samples, name, **labels):
    """Samples of `name` whose labels include `labels`."""
    return [(l, v) for n, l, v in samples
            if n == name and all(l.get(k) == want for k, want in labels.items())]


def value(samples, name, **labels):
    found = select(samples, name, **labels)
    check(len(found) == 1, "%d samples of %s%r, want exactly 1" % (len(found), name, labels))
    return found[0][1]


def check_histogram(samples, name, count, **labels):
    """_count == count, _sum > 0 (when count > 0), cumulative buckets ending at count."""
    got = value(samples, name + "_count", **labels)
    check(got == count, "%s_count%r = %g, want %d" % (name, labels, got, count))
    total = value(samples, name + "_sum", **labels)
    if count > 0:
        check(total > 0, "%s_sum%r = %g, want > 0" % (name, labels, total))
    buckets = sorted(((float(l["le"]), v) for l, v in select(samples, name + "_bucket", **labels)))
    check(buckets and buckets[-1][0] == float("inf"), "%s%r has no +Inf bucket" % (name, labels))
    check(buckets[-1][1] == count, "%s%r +Inf bucket %g, want %d" % (name, labels, buckets[-1][1], count))
    counts = [v for _, v in buckets]
    check(counts == sorted(counts), "%s%r buckets are not cumulative: %r" % (name, labels, counts))
    return buckets


# ------------------------------------------------------------------ admin

def admin_stubs(proto_dir, out_dir):
    """admin_pb2 / admin_pb2_grpc generated into out_dir (on sys.path already)."""
    cmd = [shutil.which("protoc"), "-I", proto_dir, "--python_out=" + out_dir,
           "--grpc_out=" + out_dir, "--plugin=protoc-gen-grpc=" + shutil.which("grpc_python_plugin"),
           os.path.join(proto_dir, "admin.proto")]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError("protoc admin.proto failed: " + res.stderr.strip())
    return importlib.import_module("admin_pb2"), importlib.import_module("admin_pb2_grpc")


def inspect_report(onyx, model_path, extra_args=()):
    """(cpu fallback nodes, partitions, memcpy nodes) as `onyx inspect` prints
    them; extra_args are added to its command line."""
    res = subprocess.run([onyx, "inspect", model_path] + list(extra_args), capture_output=True, text=True,
                         timeout=60)
    check(res.returncode == 0, "onyx inspect %s: exit %d: %s" % (model_path, res.returncode, res.stderr))
    numbers = {}
    for key in ("partitions", "memcpy nodes", "cpu fallback nodes"):
        m = re.search(r"^\s+%s: (\d+)$" % key, res.stdout, re.M)
        check(m is not None, "onyx inspect printed no %r line:\n%s" % (key, res.stdout))
        numbers[key] = int(m.group(1))
    return numbers["cpu fallback nodes"], numbers["partitions"], numbers["memcpy nodes"]


# ------------------------------------------------------------------ cases

def build_cases(client, admin_pb, admin, metrics_address, repo, onyx, tmp):
    pb = client.pb
    rng = np.random.default_rng(7)
    state = {}

    def mlp_ok():
        x = rng.random((1, 16), dtype=np.float32)
        return client.infer(client.infer_request("mlp", "input", "FP32", [1, 16], raw=x.tobytes()))

    def traffic():
        for _ in range(OK_REQUESTS):
            mlp_ok()
        for _ in range(BAD_REQUESTS):
            bad = client.infer_request("mlp", "input", "INT32", [1, 16], raw=bytes(64))
            base.expect_error(client, bad, client.grpc.StatusCode.INVALID_ARGUMENT)
        for _ in range(UNKNOWN_REQUESTS):
            unknown = client.infer_request("no_such_model", "input", "FP32", [1, 16], raw=bytes(64))
            base.expect_error(client, unknown, client.grpc.StatusCode.NOT_FOUND)
        state["text"] = scrape(metrics_address)
        state["samples"] = parse_metrics(state["text"])

    def request_counters():
        s = state["samples"]
        got = value(s, "onyx_requests_total", model="mlp", version="1", code="OK")
        check(got == OK_REQUESTS, "OK requests %g, want %d" % (got, OK_REQUESTS))
        # Version 1 took and refused them: they count under its label.
        got = value(s, "onyx_requests_total", model="mlp", version="1", code="INVALID_ARGUMENT")
        check(got == BAD_REQUESTS, "INVALID_ARGUMENT requests %g, want %d" % (got, BAD_REQUESTS))
        got = value(s, "onyx_requests_total", model="", version="", code="NOT_FOUND")
        check(got == UNKNOWN_REQUESTS, "NOT_FOUND requests %g, want %d" % (got, UNKNOWN_REQUESTS))
        check(not select(s, "onyx_requests_total", model="cnn"), "cnn has request counts without requests")

    def latency_histograms():
        s = state["samples"]
        check_histogram(s, "onyx_request_duration_seconds", OK_REQUESTS + BAD_REQUESTS,
                        model="mlp", version="1")
        check_histogram(s, "onyx_request_duration_seconds", UNKNOWN_REQUESTS, model="", version="")
        buckets = check_histogram(s, "onyx_compute_duration_seconds", OK_REQUESTS, model="mlp", version="1")
        check(buckets[0][0] == 0.00005 and buckets[-2][0] == 10.0,
              "latency buckets %g .. %g, want 5e-05 .. 10" % (buckets[0][0], buckets[-2][0]))
        queue = select(s, "onyx_queue_duration_seconds_count", model="mlp", version="1")
        check(queue and queue[0][1] == OK_REQUESTS, "queue histogram count %r, want %d" % (queue, OK_REQUESTS))
        # Queue time can round to 0 s, so only its count and buckets are exact.
        check(value(s, "onyx_queue_duration_seconds_sum", model="mlp", version="1") >= 0, "negative queue sum")
        total = value(s, "onyx_request_duration_seconds_sum", model="mlp", version="1")
        compute = value(s, "onyx_compute_duration_seconds_sum", model="mlp", version="1")
        check(compute <= total, "compute %g s exceeds the requests' total %g s" % (compute, total))
        check(not select(s, "onyx_request_duration_seconds_count", model="mlp", version=""),
              "requests version 1 took are counted without its label")

    def gauges_at_rest():
        s = state["samples"]
        for model in ("mlp", "cnn"):
            for name in ("onyx_queue_depth", "onyx_inflight_requests"):
                got = value(s, name, model=model, version="1")
                check(got == 0, "%s{model=%s} = %g at rest, want 0" % (name, model, got))
            check(value(s, "onyx_model_state", model=model, version="1", state="READY") == 1,
                  "%s is not READY in onyx_model_state" % model)
            check(value(s, "onyx_model_state", model=model, version="1", state="LOADING") == 0,
                  "%s is READY and LOADING at once" % model)
            check(value(s, "onyx_model_load_duration_seconds", model=model, version="1") > 0,
                  "%s load duration is not positive" % model)
        check(value(s, "onyx_process_resident_memory_bytes") > 0, "RSS is not positive")
        info = select(s, "onyx_build_info")
        check(len(info) == 1 and info[0][1] == 1, "onyx_build_info %r, want one sample of 1" % info)
        check(info[0][0].get("version") and info[0][0].get("compiler"), "build info labels %r" % info[0][0])

    def arena_series_per_model():
        s = state["samples"]
        for model in ("mlp", "cnn"):
            labels = {"device": "cpu", "model": model, "version": "1"}
            bins = select(s, "onyx_arena_bin_chunks", **labels)
            check(len(bins) == 42, "%s: %d arena bin series, want 21 bins x {in_use, free}" % (model, len(bins)))
            reserved = value(s, "onyx_arena_reserved_bytes", **labels)
            in_use = value(s, "onyx_arena_in_use_bytes", **labels)
            peak = value(s, "onyx_arena_peak_in_use_bytes", **labels)
            largest = value(s, "onyx_arena_largest_free_block_bytes", **labels)
            allocations = value(s, "onyx_arena_allocations_total", **labels)
            extends = value(s, "onyx_arena_extends_total", **labels)
            check(reserved > 0 and reserved >= in_use >= 0,
                  "%s arena: reserved %g, in use %g, want reserved > 0 and reserved >= in use >= 0"
                  % (model, reserved, in_use))
            check(reserved >= peak >= in_use, "%s arena: peak %g outside [in use %g, reserved %g]"
                  % (model, peak, in_use, reserved))
            check(largest <= reserved - in_use, "%s arena: largest free block %g > reserved - in use %g"
                  % (model, largest, reserved - in_use))
            # Warm-up runs every bucket session, so even cnn (no traffic) allocated.
            check(allocations > 0 and extends > 0, "%s arena: %g allocations, %g extends, want > 0"
                  % (model, allocations, extends))
        models = sorted({l["model"] for l, _ in select(s, "onyx_arena_reserved_bytes", device="cpu")})
        check("" not in models, "the shared arena is exported though served models do not use it: %r" % models)
        check({"mlp", "cnn"} <= set(models), "arena series for models %r, want mlp and cnn" % models)

    def arena_counts_only_its_model():
        def allocations(samples, model):
            return value(samples, "onyx_arena_allocations_total", device="cpu", model=model, version="1")
        before = parse_metrics(scrape(metrics_address))
        for _ in range(3):
            mlp_ok()
        after = parse_metrics(scrape(metrics_address))
        check(allocations(after, "mlp") > allocations(before, "mlp"),
              "mlp arena allocations %g -> %g over 3 mlp requests"
              % (allocations(before, "mlp"), allocations(after, "mlp")))
        check(allocations(after, "cnn") == allocations(before, "cnn"),
              "cnn arena allocations %g -> %g while only mlp ran"
              % (allocations(before, "cnn"), allocations(after, "cnn")))

    def kernel_series():
        s = state["samples"]
        kernels = select(s, "onyx_kernel_duration_seconds_count", model="mlp", version="1")
        check(kernels, "no onyx_kernel_duration_seconds for mlp")
        for labels, count in kernels:
            # Each bucket session ran its warm-up, then OK_REQUESTS ran on bucket 1.
            check(count >= OK_REQUESTS, "%r ran %g times, want >= %d" % (labels, count, OK_REQUESTS))
            check_histogram(s, "onyx_kernel_duration_seconds", int(count), **labels)
        nodes = select(s, "onyx_node_mean_seconds", model="mlp", version="1")
        check(0 < len(nodes) <= TOP_NODES, "%d slowest-node series, want 1 .. %d" % (len(nodes), TOP_NODES))
        for labels, mean in nodes:
            top = value(s, "onyx_node_max_seconds", **labels)
            check(0 < mean <= top, "node %s mean %g s, max %g s" % (labels.get("node"), mean, top))

    def fallback_matches_inspect():
        s = state["samples"]
        for model in ("mlp", "cnn"):
            fallback, partitions, memcpy = inspect_report(onyx, os.path.join(repo, model, "1", "model.onnx"))
            series = select(s, "onyx_model_cpu_fallback_nodes", model=model, version="1")
            check(series, "no onyx_model_cpu_fallback_nodes for %s" % model)
            for labels, got in series:
                bucket = labels["bucket"]
                check(got == fallback, "%s bucket %s: %g fallback nodes, inspect says %d"
                      % (model, bucket, got, fallback))
                got = value(s, "onyx_model_partitions", model=model, version="1", bucket=bucket)
                check(got == partitions, "%s bucket %s: %g partitions, inspect says %d"
                      % (model, bucket, got, partitions))
                got = value(s, "onyx_model_memcpy_nodes", model=model, version="1", bucket=bucket)
                check(got == memcpy, "%s bucket %s: %g memcpy nodes, inspect says %d"
                      % (model, bucket, got, memcpy))
        buckets = sorted(l["bucket"] for l, _ in select(s, "onyx_model_partitions", model="mlp"))
        check(buckets == ["1", "2", "4", "8"], "mlp buckets %r, want 1, 2, 4, 8" % buckets)

    def promtool_accepts():
        promtool = shutil.which("promtool")
        check(promtool is not None,
              "promtool not found (Debian package prometheus; scripts/install-deps.sh installs it)")
        res = subprocess.run([promtool, "check", "metrics"], input=state["text"],
                             capture_output=True, text=True, timeout=60)
        findings = (res.stdout + res.stderr).strip()
        check(res.returncode == 0 and not findings,
              "promtool check metrics: exit %d:\n%s" % (res.returncode, findings))

    def profile_model():
        future = admin.ProfileModel.future(
            admin_pb.ProfileModelRequest(model="mlp", runs=PROFILED_RUNS, timeout_ms=30000), timeout=60)
        # The profile starts when the call arrives; requests sent one at a time
        # until it answers make exactly PROFILED_RUNS runs land in it.
        sent = 0
        while not future.done() and sent < MAX_EXTRA_REQUESTS:
            mlp_ok()
            sent += 1
        resp = future.result()
        check(resp.runs == PROFILED_RUNS, "profile recorded %d runs, want %d" % (resp.runs, PROFILED_RUNS))
        check(len(resp.trace_files) == 1, "trace files %r, want one (bucket 1)" % list(resp.trace_files))
        path = resp.trace_files[0]
        check(os.path.isabs(path) and os.path.exists(path), "trace %r does not exist" % path)
        check("mlp_v1_b1_" in os.path.basename(path), "trace %r is not named after mlp v1 bucket 1" % path)
        with open(path) as f:
            trace = json.load(f)
        events = trace["traceEvents"]
        runs = [e for e in events if e["cat"] == "run"]
        kernels = [e for e in events if e["cat"] == "kernel"]
        check(len(runs) == PROFILED_RUNS, "%d run events, want %d" % (len(runs), PROFILED_RUNS))
        check(kernels and len(kernels) % PROFILED_RUNS == 0,
              "%d kernel events for %d runs" % (len(kernels), PROFILED_RUNS))
        for e in events:
            check(e["ph"] == "X" and e["dur"] >= 0 and "ts" in e, "bad trace event %r" % e)
        os.remove(path)

    def profile_errors():
        try:
            admin.ProfileModel(admin_pb.ProfileModelRequest(model="mlp", runs=0), timeout=10)
            raise base.CaseFailure("runs=0 succeeded")
        except client.grpc.RpcError as e:
            check(e.code() == client.grpc.StatusCode.INVALID_ARGUMENT and "runs" in e.details(),
                  "runs=0: %s %s" % (e.code(), e.details()))
        try:
            admin.ProfileModel(admin_pb.ProfileModelRequest(model="no_such_model", runs=1), timeout=10)
            raise base.CaseFailure("unknown model succeeded")
        except client.grpc.RpcError as e:
            check(e.code() == client.grpc.StatusCode.NOT_FOUND, "unknown model: %s %s" % (e.code(), e.details()))

    def dump_arenas():
        text = admin.DumpArenas(admin_pb.DumpArenasRequest(), timeout=10).text
        for group in ("cnn/1", "mlp/1"):
            check(re.search(r"^arena on cpu, group '%s'\narena cpu: in use" % re.escape(group), text, re.M),
                  "DumpArenas has no accounting headed by group %s:\n%s" % (group, text[:2000]))
        check(re.search(r"^  bin +\d+ \(>= \d+ B\): in use \d+ chunks", text, re.M),
              "DumpArenas lists no bin:\n%s" % text)

    return [
        ("send_known_traffic", traffic),
        ("request_counters_exact", request_counters),
        ("latency_histograms_consistent", latency_histograms),
        ("gauges_at_rest", gauges_at_rest),
        ("arena_series_per_model", arena_series_per_model),
        ("arena_counts_only_its_model", arena_counts_only_its_model),
        ("kernel_histograms_and_slowest_nodes", kernel_series),
        ("fallback_gauges_match_onyx_inspect", fallback_matches_inspect),
        ("promtool_check_metrics", promtool_accepts),
        ("admin_profile_model", profile_model),
        ("admin_profile_model_errors", profile_errors),
        ("admin_dump_arenas", dump_arenas),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--onyxd", "--proto-dir", "--repo", "--onyx"):
        ap.add_argument(flag, required=True)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="onyx_metrics_")
    proc = None
    passed = failed = 0
    try:
        mods = base.stubs_in(args.proto_dir, tmp)
        if mods is None:
            print("0 passed, 1 failed")
            return 1
        admin_pb, admin_grpc = admin_stubs(args.proto_dir, os.path.join(tmp, "stubs"))
        proc, address, metrics_address, failure = base.launch_onyxd(args.onyxd, args.repo, mods, tmp)
        if failure is not None:
            print("0 passed, 1 failed")
            return 1
        client = base.Client(mods, address)
        admin = admin_grpc.AdminStub(client.channel)
        cases = build_cases(client, admin_pb, admin, metrics_address, args.repo, args.onyx, tmp)
        passed, failed = base.run_cases(cases, proc, os.path.join(tmp, "onyxd.stderr"))
    finally:
        if proc is not None:
            failed += base.stop_checked(proc, os.path.join(tmp, "onyxd.stderr"))
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
