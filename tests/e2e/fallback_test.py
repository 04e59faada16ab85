#!/usr/bin/python3
"""End-to-end test of the CPU-fallback gate (max_cpu_fallback_nodes) in onyxd.

usage: fallback_test.py --onyxd BIN --proto-dir DIR --repo DIR
                        --onyxd-test-providers BIN --onyx-test-providers CLI

onyxd registers only the `cpu` provider, so nothing can fall back to CPU there;
BIN given to --onyxd-test-providers is the same daemon with the test-only
provider `test` (providers/testing/) registered too, and CLI the `onyx` tool
likewise (--onyxd and --repo are accepted for the common flags but not used).

Writes a repository where every model is the same graph
    x -> MatMul(W1) -> Relu -> MatMul(W2) -> Relu -> Add(b) -> y
with config.yaml `providers: ["test:ops=Relu", cpu]` and optimization disabled,
so the test provider claims the two Relu nodes and the other three fall back
to CPU: by hand, 3 fallback nodes, 5 partitions (cpu, test, cpu, test, cpu)
and 4 Memcpy nodes (into and out of each Relu). The models differ in
max_cpu_fallback_nodes: 0 and 2 (below the count) must be UNAVAILABLE in
RepositoryIndex with the partition report in the reason and in the log; 3 (the
count) and -1 (no gate) load, answer what numpy computes, and export
onyx_model_cpu_fallback_nodes / onyx_model_partitions / onyx_model_memcpy_nodes
equal to both the hand count and what `onyx inspect` prints with the same
providers. Prints "PASS name" / "FAIL name: reason" per case and
"N passed, M failed"; exits non-zero on any failure.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics_test as metrics  # noqa: E402  /metrics scraping and parsing
import python_client_test as base  # noqa: E402  stubs, server start/stop, cases

check = base.check
PROVIDERS = ["test:ops=Relu", "cpu"]
FALLBACK, PARTITIONS, MEMCPY = 3, 5, 4   # counted by hand from the graph above
FALLBACK_NODES = ("mm1", "mm2", "add")
GATES = {"gate_0": 0, "gate_2": 2, "gate_3": 3, "no_gate": -1}
REFUSED = ("gate_0", "gate_2")
SERVED = ("gate_3", "no_gate")
BUCKETS = ["1", "2", "4", "8"]


def make_model(rng):
    w1 = rng.normal(0.0, 0.5, size=(16, 16)).astype(np.float32)
    w2 = rng.normal(0.0, 0.5, size=(16, 8)).astype(np.float32)
    b = rng.normal(0.0, 0.5, size=(8,)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W1"], ["h1"], name="mm1"),
         helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
         helper.make_node("MatMul", ["r1", "W2"], ["h2"], name="mm2"),
         helper.make_node("Relu", ["h2"], ["r2"], name="relu2"),
         helper.make_node("Add", ["r2", "b"], ["y"], name="add")],
        "fallback",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
        initializer=[numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2"),
                     numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    params = {"W1": w1.astype(np.float64), "W2": w2.astype(np.float64), "b": b.astype(np.float64)}
    return model, params


def forward(p, x):
    r1 = np.maximum(x.astype(np.float64) @ p["W1"], 0.0)
    return np.maximum(r1 @ p["W2"], 0.0) + p["b"]


def write_repository(root, model):
    for name, gate in GATES.items():
        os.makedirs(os.path.join(root, name, "1"))
        onnx.save(model, os.path.join(root, name, "1", "model.onnx"))
        with open(os.path.join(root, name, "config.yaml"), "w") as f:
            f.write('providers: ["test:ops=Relu", cpu]\n'
                    "optimization_level: disabled\n"
                    "max_cpu_fallback_nodes: %d\n" % gate)


def inspect_counts(onyx, model_path):
    """(fallback nodes, partitions, memcpy nodes) as `onyx inspect` prints them
    with PROVIDERS and optimization disabled."""
    return metrics.inspect_report(onyx, model_path,
                                  ["--providers", ",".join(PROVIDERS), "--optimization", "disabled"])


def build_cases(client, ctx):
    pb = client.pb
    rng = np.random.default_rng(11)

    def index():
        idx = client.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=base.RPC_TIMEOUT_S)
        return {m.name: m for m in idx.models}

    def expect_report(text, where, gate):
        check("%d nodes fell back to CPU, more than max_cpu_fallback_nodes=%d" % (FALLBACK, gate) in text,
              "%s does not give the count and the gate: %r" % (where, text))
        check("cpu fallback nodes: %d" % FALLBACK in text and "partitions: %d" % PARTITIONS in text
              and "memcpy nodes: %d" % MEMCPY in text,
              "%s has no partition report with the counts: %r" % (where, text))
        for node in FALLBACK_NODES:
            check("'%s' declined by test" % node in text,
                  "%s does not list fallback node %r: %r" % (where, node, text))

    def refused_case(name):
        def run():
            models = index()
            check(name in models, "%s missing from RepositoryIndex %r" % (name, sorted(models)))
            m = models[name]
            check(m.state == "UNAVAILABLE", "%s state %r, want UNAVAILABLE" % (name, m.state))
            expect_report(m.reason, "%s's RepositoryIndex reason" % name, GATES[name])
            check(not client.stub.ModelReady(pb.ModelReadyRequest(name=name),
                                             timeout=base.RPC_TIMEOUT_S).ready,
                  "%s is ready" % name)
            req = client.infer_request(name, "x", "FP32", [1, 16], raw=bytes(64))
            base.expect_error(client, req, client.grpc.StatusCode.UNAVAILABLE)
        return run

    def refusal_logged():
        with open(ctx["stderr"], errors="replace") as f:
            log = f.read()
        for name in REFUSED:
            check("model '%s'" % name in log, "the log does not name %s:\n%s" % (name, log[-3000:]))
            # The log holds each refusal's reason; its report is checked once.
            expect_report(log, "the log", GATES[name])

    def served_case(name):
        def run():
            m = index().get(name)
            check(m is not None and m.state == "READY",
                  "%s state %r (%r), want READY" % (name, m and m.state, m and m.reason))
            x = rng.normal(0.0, 1.0, size=(3, 16)).astype(np.float32)
            req = client.infer_request(name, "x", "FP32", [3, 16], raw=x.tobytes(), outputs=["y"])
            base.expect_close(base.output_array(client.infer(req), "y"), forward(ctx["params"], x))
        return run

    def inspect_matches_hand_count():
        got = inspect_counts(ctx["onyx"], ctx["model_path"])
        check(got == (FALLBACK, PARTITIONS, MEMCPY),
              "onyx inspect: (fallback, partitions, memcpy) %r, counted by hand %r"
              % (got, (FALLBACK, PARTITIONS, MEMCPY)))
        ctx["inspect"] = got

    def inspect_gate():
        res = subprocess.run([ctx["onyx"], "inspect", ctx["model_path"], "--providers", ",".join(PROVIDERS),
                              "--optimization", "disabled", "--max-cpu-fallback", str(FALLBACK - 1)],
                             capture_output=True, text=True, timeout=60)
        check(res.returncode == 1, "onyx inspect --max-cpu-fallback %d: exit %d, want 1"
              % (FALLBACK - 1, res.returncode))
        expect_report(res.stderr, "onyx inspect's refusal", FALLBACK - 1)

    def gauges_match_inspect():
        check("inspect" in ctx, "onyx inspect gave no counts")
        fallback, partitions, memcpy = ctx["inspect"]
        s = metrics.parse_metrics(metrics.scrape(ctx["metrics"]))
        for name in SERVED:
            series = metrics.select(s, "onyx_model_cpu_fallback_nodes", model=name, version="1")
            buckets = sorted(l["bucket"] for l, _ in series)
            check(buckets == BUCKETS, "%s fallback series for buckets %r, want %r" % (name, buckets, BUCKETS))
            for labels, got in series:
                b = labels["bucket"]
                check(got == fallback, "%s bucket %s: %g fallback nodes, inspect says %d" % (name, b, got, fallback))
                got = metrics.value(s, "onyx_model_partitions", model=name, version="1", bucket=b)
                check(got == partitions, "%s bucket %s: %g partitions, inspect says %d" % (name, b, got, partitions))
                got = metrics.value(s, "onyx_model_memcpy_nodes", model=name, version="1", bucket=b)
                check(got == memcpy, "%s bucket %s: %g memcpy nodes, inspect says %d" % (name, b, got, memcpy))
        for name in REFUSED:
            check(not metrics.select(s, "onyx_model_partitions", model=name),
                  "%s was refused but exports partition gauges" % name)

    cases = [("inspect_counts_match_hand_count", inspect_matches_hand_count),
             ("inspect_gate_refuses_below_count", inspect_gate)]
    cases += [("refused_%s_unavailable_with_report" % n, refused_case(n)) for n in REFUSED]
    cases.append(("refusal_logged_with_report", refusal_logged))
    cases += [("served_%s_matches_numpy" % n, served_case(n)) for n in SERVED]
    cases.append(("fallback_gauges_match_inspect", gauges_match_inspect))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--onyxd", "--proto-dir", "--repo", "--onyxd-test-providers", "--onyx-test-providers"):
        ap.add_argument(flag, required=True)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="onyx_fallback_")
    proc = None
    passed = failed = 0
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    try:
        mods = base.stubs_in(args.proto_dir, tmp)
        if mods is None:
            print("0 passed, 1 failed")
            return 1
        model, params = make_model(np.random.default_rng(3))
        repo = os.path.join(tmp, "repo")
        write_repository(repo, model)
        proc, address, metrics_address, failure = base.launch_onyxd(
            args.onyxd_test_providers, repo, mods, tmp)
        if failure is not None:
            print("0 passed, 1 failed")
            return 1
        client = base.Client(mods, address)
        ctx = {"params": params, "onyx": args.onyx_test_providers, "metrics": metrics_address,
               "stderr": stderr_path, "model_path": os.path.join(repo, "gate_3", "1", "model.onnx")}
        passed, failed = base.run_cases(build_cases(client, ctx), proc, stderr_path)
        client.channel.close()
    finally:
        if proc is not None:
            failed += base.stop_checked(proc, stderr_path)
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
