#!/usr/bin/python3
"""End-to-end test of onyxd's dynamic batcher over loopback gRPC.

usage: batching_test.py --onyxd BIN --proto-dir DIR --repo DIR

Starts BIN against REPO (the demo repository: `mlp` has buckets 1, 2, 4, 8,
max_queue_delay_us 200, instance_count 1) with stubs generated as
python_client_test.py does, then:
  1. sends every input alone, one at a time (the unbatched results), checking
     each against a numpy forward pass, and that no engine run merged requests;
  2. sends the same inputs from 64 concurrent clients (batch sizes 1..8) and
     checks that every response equals that input's unbatched result;
  3. reads onyx_batch_requests from /metrics: runs that merged more than one
     request must have happened;
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


def batch_histogram(metrics_address):
    """{le: cumulative count} and total count of onyx_batch_requests{model="mlp"}."""
    with urllib.request.urlopen("http://%s/metrics" % metrics_address, timeout=10) as r:
        text = r.read().decode()
    buckets, count = {}, None
    for line in text.splitlines():
        m = re.match(r'onyx_batch_requests_bucket\{(.*)\} (\S+)$', line)
        if m and 'model="mlp"' in m.group(1):
            le = re.search(r'le="([^"]+)"', m.group(1)).group(1)
            buckets[le] = float(m.group(2))
        m = re.match(r'onyx_batch_requests_count\{(.*)\} (\S+)$', line)
        if m and 'model="mlp"' in m.group(1):
            count = float(m.group(2))
    return buckets, count


def merged_runs(metrics_address):
    buckets, count = batch_histogram(metrics_address)
    if count is None:
        return 0, 0
    return int(count - buckets.get("1", 0.0)), int(count)


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

    def unbatched_baseline():
        for i, x in enumerate(inputs):
            alone[i] = infer(x)
            base.expect_close(alone[i], base.mlp_forward(params, x))
        merged, runs = merged_runs(metrics_address)
        base.check(runs >= len(inputs), "only %d engine runs counted for %d requests"
                   % (runs, len(inputs)))
        base.check(merged == 0, "%d runs merged requests sent one at a time" % merged)

    def concurrent_mixed_batches():
        base.check(all(a is not None for a in alone), "no unbatched baseline")
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
        buckets, count = batch_histogram(metrics_address)
        merged, runs = merged_runs(metrics_address)
        print("  onyx_batch_requests{model=\"mlp\"}: %d runs, %d merged >1 request; "
              "cumulative buckets %s" % (runs, merged, buckets))
        base.check(merged > 0, "no engine run merged more than one request")
        base.check(runs < 2 * len(inputs), "%d runs for %d requests: nothing was saved"
                   % (runs, 2 * len(inputs)))

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
