#!/usr/bin/python3
"""End-to-end test of deadlines and cancellation of queued requests in onyxd.

usage: deadline_test.py --onyxd BIN --proto-dir DIR --repo DIR

Writes a repository with one model, `slow`: a Loop whose trip count is the
request's input `iters` (INT64 [1]), each iteration y = tanh(y @ W) on a
256x256 matrix, so a request's run time is chosen by the request. Its
config.yaml has one worker (instance_count 1) on one thread (a run's length
then follows the measured one even on a busy host) and no batching. onyxd is started
on it (--repo is accepted for the common flags but not used).

A "blocker" request with enough iterations to keep the worker busy for a few
seconds is sent first; once /metrics shows it running (in flight 1, queue depth
0), probe requests queue behind it:
  - probes with a short gRPC deadline: the client gets DEADLINE_EXCEEDED;
  - probes with the `timeout` request parameter (µs) and no gRPC deadline: the
    server itself answers DEADLINE_EXCEEDED, saying the deadline passed while
    queued;
  - probes cancelled by the client (future.cancel()) once /metrics shows them
    queued: the client sees CANCELLED.
After each, the blocker completes, a follow-up request is served, and
ModelStatistics shows that the probes never ran (execution_count grew by the
blocker and the follow-up only; fail count grew by the probes) and /metrics
counts them under onyx_requests_total{code="DEADLINE_EXCEEDED"|"CANCELLED"},
the deadline ones also under onyx_request_rejections_total{reason=
"deadline_in_queue"} (cancellations are not rejections).
The blocker's length is sized from a measured run (4 s, over ten times the
probes' 0.3 s deadline and 0.2 s timeout, so a host that runs it faster than
measured still outlasts them); nothing asserts a duration, and every wait for
a state /metrics must reach polls with a 30 s bound.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed";
exits non-zero on any failure.
"""

import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics_test as metrics  # noqa: E402  /metrics scraping and parsing
import python_client_test as base  # noqa: E402  stubs, server start/stop, cases

check = base.check
MODEL = "slow"
N = 256                    # matrix side: one iteration is a 256x256x256 MatMul
BLOCKER_SECONDS = 4.0      # wanted length of the blocker's run (sized, not asserted)
MAX_BLOCKER_ITERS = 200000
PROBE_DEADLINE_S = 0.3     # gRPC deadline of the deadline probes
PROBE_TIMEOUT_US = 200000  # `timeout` parameter of the timeout probes
PROBES = 3
WAIT_S = 30.0              # bound on waiting for a state /metrics must reach

CONFIG = """\
max_batch_size: 0
instance_count: 1
intra_op_threads: 1
dynamic_batching:
  max_queue_delay_us: 0
warmup:
  runs: 1
  inputs: zeros
"""


def write_repository(root, rng):
    w = (rng.normal(0.0, 1.0, size=(N, N)) / np.sqrt(N)).astype(np.float32)
    y0 = rng.normal(0.0, 1.0, size=(N, N)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("MatMul", ["y_in", "W"], ["prod"]),
         helper.make_node("Tanh", ["prod"], ["y_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [N, N])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [N, N])])
    graph = helper.make_graph(
        [helper.make_node("Squeeze", ["iters"], ["trip_count"]),
         helper.make_node("Constant", [], ["cond"],
                          value=helper.make_tensor("c", TensorProto.BOOL, [], [True])),
         helper.make_node("Loop", ["trip_count", "cond", "Y0"], ["y"], body=body)],
        MODEL,
        [helper.make_tensor_value_info("iters", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, N])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(y0, "Y0")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(root, MODEL, "1"))
    onnx.save(model, os.path.join(root, MODEL, "1", "model.onnx"))
    with open(os.path.join(root, MODEL, "config.yaml"), "w") as f:
        f.write(CONFIG)
    return w.astype(np.float64), y0.astype(np.float64)


def build_cases(client, context):
    pb = client.pb
    SC = client.grpc.StatusCode
    metrics_address, (w, y0) = client.metrics_address, context
    state = {}

    def request(iters, timeout_us=None):
        req = client.infer_request(MODEL, "iters", "INT64", [1],
                                   raw=np.array([iters], dtype="<i8").tobytes())
        if timeout_us is not None:
            req.parameters["timeout"].int64_param = timeout_us
        return req

    def output(resp):
        check(len(resp.raw_output_contents) == 1 and list(resp.outputs[0].shape) == [N, N],
              "reply has %d raw outputs, shape %r" % (len(resp.raw_output_contents),
                                                     [list(o.shape) for o in resp.outputs]))
        return np.frombuffer(resp.raw_output_contents[0], dtype="<f4").reshape(N, N)

    def stats():
        r = client.stub.ModelStatistics(pb.ModelStatisticsRequest(name=MODEL),
                                        timeout=base.RPC_TIMEOUT_S)
        check(len(r.model_stats) == 1, "%d statistics entries for %s" % (len(r.model_stats), MODEL))
        s = r.model_stats[0]
        return {"executions": s.execution_count, "inferences": s.inference_count,
                "success": s.inference_stats.success.count, "fail": s.inference_stats.fail.count}

    def gauges():
        s = metrics.parse_metrics(metrics.scrape(metrics_address))
        return (metrics.value(s, "onyx_inflight_requests", model=MODEL, version="1"),
                metrics.value(s, "onyx_queue_depth", model=MODEL, version="1"))

    def requests_total(code):
        found = metrics.select(metrics.parse_metrics(metrics.scrape(metrics_address)),
                               "onyx_requests_total", model=MODEL, version="1", code=code)
        return found[0][1] if found else 0.0

    def rejections(reason):
        found = metrics.select(metrics.parse_metrics(metrics.scrape(metrics_address)),
                               "onyx_request_rejections_total", model=MODEL, version="1",
                               reason=reason)
        return found[0][1] if found else 0.0

    def await_gauges(inflight, queued, what):
        """Waits until /metrics shows `inflight` requests in flight, `queued` of
        them queued: an ordering point, not a timing assertion."""
        end = time.monotonic() + WAIT_S
        got = None
        while time.monotonic() < end:
            got = gauges()
            if got == (inflight, queued):
                return
            time.sleep(0.01)
        raise base.CaseFailure("%s: (in flight, queued) = %r, want %r" % (what, got, (inflight, queued)))

    def start_blocker():
        blocker = client.stub.ModelInfer.future(request(state["blocker_iters"]), timeout=120)
        await_gauges(1, 0, "blocker running")
        return blocker

    def finish_round(blocker):
        """The blocker and a follow-up complete: the worker has dealt with every probe."""
        output(blocker.result())
        got = output(client.infer(request(1)))
        check(np.allclose(got, np.tanh(y0 @ w), rtol=1e-4, atol=1e-5), "follow-up output is wrong")
        await_gauges(0, 0, "after the follow-up")

    def expect_counts(before, probes):
        after = stats()
        want = {"executions": before["executions"] + 2, "inferences": before["inferences"] + 2,
                "success": before["success"] + 2, "fail": before["fail"] + probes}
        check(after == want, "statistics %r, want %r (before %r): blocker and follow-up ran, "
              "%d probes failed without running" % (after, want, before, probes))

    def one_iteration_and_sizing():
        got = output(client.infer(request(1)))
        check(np.allclose(got, np.tanh(y0 @ w), rtol=1e-4, atol=1e-5),
              "1 iteration: max abs err %.3g" % np.max(np.abs(got - np.tanh(y0 @ w))))
        want = y0
        for _ in range(3):
            want = np.tanh(want @ w)
        got = output(client.infer(request(3)))
        check(np.allclose(got, want, rtol=1e-4, atol=1e-4),
              "3 iterations: max abs err %.3g" % np.max(np.abs(got - want)))
        # Size the blocker from a measured run (the run time only sizes it).
        iters = 20
        start = time.monotonic()
        client.infer(request(iters))
        per_iter = max((time.monotonic() - start) / iters, 1e-5)
        state["blocker_iters"] = int(min(MAX_BLOCKER_ITERS, BLOCKER_SECONDS / per_iter))
        print("note: %.3f ms per iteration; blocker %d iterations"
              % (per_iter * 1e3, state["blocker_iters"]))

    def grpc_deadline_probes():
        before = stats()
        blocker = start_blocker()
        probes = [client.stub.ModelInfer.future(request(1), timeout=PROBE_DEADLINE_S)
                  for _ in range(PROBES)]
        for i, probe in enumerate(probes):
            try:
                probe.result()
                raise base.CaseFailure("probe %d succeeded behind the blocker" % i)
            except client.grpc.RpcError as e:
                check(e.code() == SC.DEADLINE_EXCEEDED,
                      "probe %d: %s %s, want DEADLINE_EXCEEDED" % (i, e.code(), e.details()))
        check(not blocker.done(), "the blocker finished before the probes' deadlines")
        finish_round(blocker)
        expect_counts(before, PROBES)
        got = requests_total("DEADLINE_EXCEEDED")
        check(got == PROBES, "onyx_requests_total{code=DEADLINE_EXCEEDED} %g, want %d" % (got, PROBES))
        got = rejections("deadline_in_queue")
        check(got == PROBES, "onyx_request_rejections_total{reason=deadline_in_queue} %g, want %d"
              % (got, PROBES))

    def timeout_parameter_probes():
        before = stats()
        counted = requests_total("DEADLINE_EXCEEDED")
        rejected = rejections("deadline_in_queue")
        blocker = start_blocker()
        probes = [client.stub.ModelInfer.future(request(1, timeout_us=PROBE_TIMEOUT_US), timeout=120)
                  for _ in range(PROBES)]
        # No wait for /metrics to show them queued: their timeout may pass
        # first. The server's "queued" answer and the statistics below show it.
        for i, probe in enumerate(probes):
            try:
                probe.result()
                raise base.CaseFailure("probe %d succeeded behind the blocker" % i)
            except client.grpc.RpcError as e:
                check(e.code() == SC.DEADLINE_EXCEEDED and "queued" in (e.details() or ""),
                      "probe %d: %s %r, want DEADLINE_EXCEEDED saying it was queued"
                      % (i, e.code(), e.details()))
                check(MODEL in e.details(), "probe %d: %r does not name the model" % (i, e.details()))
        # The server answers them when their timeout passes, not when the
        # busy worker frees up: the blocker is still running.
        check(not blocker.done(), "the timeout probes were answered only after the blocker's run")
        finish_round(blocker)
        expect_counts(before, PROBES)
        got = requests_total("DEADLINE_EXCEEDED") - counted
        check(got == PROBES, "onyx_requests_total{code=DEADLINE_EXCEEDED} grew by %g, want %d"
              % (got, PROBES))
        got = rejections("deadline_in_queue") - rejected
        check(got == PROBES, "onyx_request_rejections_total{reason=deadline_in_queue} grew by %g, "
              "want %d" % (got, PROBES))

    def cancelled_probes():
        before = stats()
        rejected = sum(rejections(r) for r in ("deadline_in_queue", "deadline_before_run"))
        blocker = start_blocker()
        probes = [client.stub.ModelInfer.future(request(1), timeout=120) for _ in range(PROBES)]
        await_gauges(1 + PROBES, PROBES, "probes queued")
        for i, probe in enumerate(probes):
            check(probe.cancel(), "probe %d could not be cancelled" % i)
            check(probe.cancelled(), "probe %d is not cancelled" % i)
        check(not blocker.done(), "the blocker finished before the probes were cancelled")
        finish_round(blocker)
        expect_counts(before, PROBES)
        got = requests_total("CANCELLED")
        check(got == PROBES, "onyx_requests_total{code=CANCELLED} %g, want %d" % (got, PROBES))
        now = sum(rejections(r) for r in ("deadline_in_queue", "deadline_before_run"))
        check(now == rejected, "cancellations were counted as rejections (%g -> %g)" % (rejected, now))

    def still_serving():
        check(client.stub.ServerReady(pb.ServerReadyRequest(), timeout=base.RPC_TIMEOUT_S).ready,
              "server not ready")
        check(client.stub.ModelReady(pb.ModelReadyRequest(name=MODEL), timeout=base.RPC_TIMEOUT_S).ready,
              "%s not ready" % MODEL)
        got = output(client.infer(request(1)))
        check(np.allclose(got, np.tanh(y0 @ w), rtol=1e-4, atol=1e-5), "output is wrong")
        ok = requests_total("OK")
        check(ok > 0, "no OK requests counted")

    return [
        ("one_iteration_matches_numpy", one_iteration_and_sizing),
        ("grpc_deadline_while_queued_never_runs", grpc_deadline_probes),
        ("timeout_parameter_while_queued_never_runs", timeout_parameter_probes),
        ("cancelled_while_queued_never_runs", cancelled_probes),
        ("server_still_serving", still_serving),
    ]


def prepare(args, tmp):
    repo = os.path.join(tmp, "repo")
    return repo, write_repository(repo, np.random.default_rng(5))


def main():
    return base.run_suite(__doc__, "onyx_deadline_", prepare, build_cases)


if __name__ == "__main__":
    sys.exit(main())
