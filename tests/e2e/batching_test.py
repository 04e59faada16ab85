#!/usr/bin/python3
"""End-to-end test of onyxd's dynamic batcher over loopback gRPC.

usage: batching_test.py --onyxd BIN --proto-dir DIR --repo DIR

Starts BIN against REPO (the demo repository: `mlp` has buckets 1, 2, 4, 8,
max_queue_delay_us 200, instance_count 1) with stubs generated as
python_client_test.py does, then:
  1. sends every input alone, one at a time (the unbatched results), checking
     each against a numpy forward pass, and that /metrics counted exactly one
     engine run per request, each of one request and its own rows;
  2. sends the same inputs from 64 concurrent clients (batch sizes 1..8) and
     checks that every response equals that input's unbatched result;
  3. reads onyx_batch_requests and onyx_batch_rows from /metrics for that
     phase: the runs served every request and every row exactly once, none
     had more than 8 rows, and some merged more than one request;
  4. a request whose `timeout` parameter is 0 µs gets DEADLINE_EXCEEDED.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed";
exits non-zero on any failure. onyxd is always stopped.
"""

import os
import re
import sys
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402  stubs, server start/stop, numpy reference

CLIENTS = 64
REQUESTS_PER_CLIENT = 6
FEATURES = 16
# Batched and unbatched runs use different bucket sessions; rows must agree
# to float rounding, not necessarily bit for bit.
SAME_RTOL = 1e-5
SAME_ATOL = 1e-6


def mlp_request(pb, x):
    req = pb.ModelInferRequest(model_name="mlp")
    req.inputs.add(name="input", datatype="FP32", shape=list(x.shape))
    req.raw_input_contents.append(x.tobytes())
    req.outputs.add(name="probabilities")
    return req


def histogram(metrics_address, name):
    """{le: cumulative count}, count and sum of histogram `name`{model="mlp"}."""
    with urllib.request.urlopen("http://%s/metrics" % metrics_address, timeout=10) as r:
        text = r.read().decode()
    h = {"buckets": {}, "count": 0.0, "sum": 0.0}
    for line in text.splitlines():
        m = re.match(r'%s_(bucket|count|sum)\{(.*)\} (\S+)$' % name, line)
        if not m or 'model="mlp"' not in m.group(2):
            continue
        if m.group(1) == "bucket":
            h["buckets"][re.search(r'le="([^"]+)"', m.group(2)).group(1)] = float(m.group(3))
        else:
            h[m.group(1)] = float(m.group(3))
    return h


class BatchCounts:
    """What the batcher did between construction and delta(): engine runs,
    requests and rows summed over those runs, runs that merged more than one
    request, and runs of more than 8 rows (the largest bucket)."""

    def __init__(self, metrics_address):
        self.address = metrics_address
        self.before = self.read()

    def read(self):
        return (histogram(self.address, "onyx_batch_requests"), histogram(self.address, "onyx_batch_rows"))

    def delta(self):
        (r0, w0), (r1, w1) = self.before, self.read()
        runs = int(r1["count"] - r0["count"])
        return {
            "runs": runs,
            "requests": int(round(r1["sum"] - r0["sum"])),
            "rows": int(round(w1["sum"] - w0["sum"])),
            "merged": runs - int(r1["buckets"].get("1", 0.0) - r0["buckets"].get("1", 0.0)),
            "over_8_rows": int((w1["count"] - w1["buckets"].get("8", 0.0))
                               - (w0["count"] - w0["buckets"].get("8", 0.0))),
        }


def build_cases(client, repo):
    grpc = client.grpc
    pb = client.pb
    stub = client.stub
    metrics_address = client.metrics_address
    params = base.load_initializers(os.path.join(repo, "mlp", "1", "model.onnx"))
    rng = np.random.default_rng(20261130)
    inputs = []
    for _ in range(CLIENTS * REQUESTS_PER_CLIENT):
        rows = int(rng.integers(1, 9))
        inputs.append(rng.normal(0.0, 1.0, size=(rows, FEATURES)).astype(np.float32))
    alone = [None] * len(inputs)

    def infer(x):
        resp = stub.ModelInfer(mlp_request(pb, x), timeout=base.RPC_TIMEOUT_S)
        return base.output_array(resp, "probabilities")

    total_rows = sum(len(x) for x in inputs)
    concurrent = {}

    def unbatched_baseline():
        counts = BatchCounts(metrics_address)
        for i, x in enumerate(inputs):
            alone[i] = infer(x)
            base.expect_close(alone[i], base.mlp_forward(params, x))
        d = counts.delta()
        want = {"runs": len(inputs), "requests": len(inputs), "rows": total_rows, "merged": 0,
                "over_8_rows": 0}
        base.check(d == want, "requests sent one at a time: batcher counts %r, want %r" % (d, want))

    def concurrent_mixed_batches():
        base.check(all(a is not None for a in alone), "no unbatched baseline")
        concurrent["counts"] = BatchCounts(metrics_address)
        errors = []
        lock = threading.Lock()
        start = threading.Barrier(CLIENTS)

        def client(c):
            start.wait()
            for k in range(REQUESTS_PER_CLIENT):
                i = c * REQUESTS_PER_CLIENT + k
                try:
                    got = infer(inputs[i])
                    base.check(got.shape == alone[i].shape, "request %d: shape %r, want %r"
                               % (i, got.shape, alone[i].shape))
                    if not np.allclose(got, alone[i], rtol=SAME_RTOL, atol=SAME_ATOL):
                        raise base.CaseFailure(
                            "request %d (%d rows): differs from its unbatched result by %.3g"
                            % (i, len(inputs[i]), np.max(np.abs(got - alone[i]))))
                except (base.CaseFailure, grpc.RpcError) as e:
                    with lock:
                        errors.append(str(e) if isinstance(e, base.CaseFailure)
                                      else "request %d: rpc %s: %s" % (i, e.code(), e.details()))

        with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
            list(pool.map(client, range(CLIENTS)))
        base.check(not errors, "%d of %d requests wrong; first: %s"
                   % (len(errors), len(inputs), errors[0] if errors else ""))

    def batches_formed():
        base.check("counts" in concurrent, "the concurrent case did not run")
        d = concurrent["counts"].delta()
        print("  concurrent phase: %r" % d)
        # Each checks one property: every request in exactly one run, every row
        # once, no run past the largest bucket, and some run merging requests.
        base.check(d["requests"] == len(inputs), "runs served %d requests, %d were sent"
                   % (d["requests"], len(inputs)))
        base.check(d["rows"] == total_rows, "runs computed %d rows, %d were sent" % (d["rows"], total_rows))
        base.check(d["over_8_rows"] == 0, "%d runs had more than 8 rows" % d["over_8_rows"])
        base.check(d["merged"] > 0, "no engine run merged more than one request (%d runs)" % d["runs"])

    def timeout_parameter():
        req = mlp_request(pb, inputs[0])
        req.parameters["timeout"].int64_param = 0
        try:
            stub.ModelInfer(req, timeout=base.RPC_TIMEOUT_S)
        except grpc.RpcError as e:
            base.check(e.code() == grpc.StatusCode.DEADLINE_EXCEEDED,
                       "status %s (%s), want DEADLINE_EXCEEDED" % (e.code(), e.details()))
            return
        raise base.CaseFailure("request succeeded, want DEADLINE_EXCEEDED")

    return [
        ("unbatched_baseline_matches_numpy", unbatched_baseline),
        ("concurrent_%d_clients_equal_unbatched" % CLIENTS, concurrent_mixed_batches),
        ("batches_of_more_than_one_request_formed", batches_formed),
        ("timeout_parameter_deadline_exceeded", timeout_parameter),
    ]


def main():
    return base.run_suite(__doc__, "onyx_batching_", lambda args, tmp: (args.repo, args.repo),
                          build_cases)


if __name__ == "__main__":
    sys.exit(main())
