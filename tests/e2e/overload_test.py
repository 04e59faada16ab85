#!/usr/bin/python3
"""End-to-end test of onyxd's overload policy (config/README.md, Overload).

usage: overload_test.py --onyxd BIN --proto-dir DIR --repo DIR

Serves a copy of REPO plus:
  - `slow` (deadline_test's Loop model: a request chooses its run time) with
    one worker and dynamic_batching.max_queue_size 1;
  - `slow_wide`: the same model with the default queue (its replies are 256 KiB);
  - `mlp_capped`: mlp with dynamic_batching.max_inflight_bytes 4096;
  - `amplify` (stream_test's model): a 64-byte request, a 64 KiB reply;
with server.yaml max_inflight_bytes 8 MiB and max_stream_buffer_bytes 1 MiB,
every request logged. Each case waits for states /metrics reports (ordering
points, never durations):
  1. a full queue answers RESOURCE_EXHAUSTED naming max_queue_size, with
     grpc-retry-pushback-ms in its trailing metadata;
  2. the `timeout` parameter 0: DEADLINE_EXCEEDED before the request is queued;
  3. the server byte budget: a request larger than it is refused before it is
     decoded; one that fits alone is refused while a large request is in
     flight and served once that one is answered;
  4. the model byte budget refuses a request past its cap, others are served;
  5. a stream client that never reads: with replies of one size onyxd stops
     reading before its 1 MiB buffer would overflow and every reply arrives
     intact once the client reads; when a small reply came first and 60
     large ones complete at once (queued behind a blocker of `slow_wide`), the
     ones that cannot be buffered are answered with "stream reply buffer full"
     errors, and every other reply is intact;
and onyx_request_rejections_total counts each refusal under its reason.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed".
"""

import os
import re
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deadline_test  # noqa: E402  the slow Loop model
import metrics_test as metrics  # noqa: E402  /metrics scraping and parsing
import python_client_test as base  # noqa: E402
import stream_test  # noqa: E402  the amplify model

check = base.check
SERVER_BUDGET = 8 << 20
MODEL_BUDGET = 4096
STREAM_BUFFER = 1 << 20
AMPLIFY_REPLY = 16 * stream_test.TILES * 4  # 64 KiB of output per reply
REPLY_TRANSPORT_SLACK = stream_test.REPLY_TRANSPORT_SLACK  # replies gRPC and the socket hold
WAIT_S = 60.0
SLOW_CONFIG = deadline_test.CONFIG.replace("  max_queue_delay_us: 0\n",
                                           "  max_queue_delay_us: 0\n  max_queue_size: 1\n")
WIDE = "slow_wide"   # the same Loop model with the default queue, for the stream case
WIDE_REQUESTS = 60   # 60 replies of 256 KiB: far more than the transport and the buffer hold
BLOCKER_ITERS_MAX = 200000
BLOCKER_SECONDS = 3.0

log_path = [None]


def prepare(args, tmp):
    repo = os.path.join(tmp, "repo")
    shutil.copytree(args.repo, repo)
    rng = np.random.default_rng(11)
    slow = deadline_test.write_repository(repo, rng)
    with open(os.path.join(repo, deadline_test.MODEL, "config.yaml"), "w") as f:
        f.write(SLOW_CONFIG)
    wide_root = os.path.join(tmp, "wide")
    wide = deadline_test.write_repository(wide_root, np.random.default_rng(12))
    shutil.move(os.path.join(wide_root, deadline_test.MODEL), os.path.join(repo, WIDE))
    shutil.copytree(os.path.join(args.repo, "mlp"), os.path.join(repo, "mlp_capped"))
    with open(os.path.join(repo, "mlp_capped", "config.yaml"), "w") as f:
        f.write("dynamic_batching:\n  max_inflight_bytes: %d\n" % MODEL_BUDGET)
    stream_test.write_amplify(os.path.join(repo, "amplify", "1", "model.onnx"))
    log_path[0] = os.path.join(tmp, "onyxd.stderr")
    stream_test.log_path[0] = log_path[0]
    params = base.load_initializers(os.path.join(args.repo, "mlp", "1", "model.onnx"))
    return repo, (slow, wide, params)


def build_cases(client, context):
    (w, y0), (wide_w, wide_y0), params = context
    pb = client.pb
    SC = client.grpc.StatusCode
    state = {}

    def scrape():
        return metrics.parse_metrics(metrics.scrape(client.metrics_address))

    def rejections(model, reason):
        found = metrics.select(scrape(), "onyx_request_rejections_total", model=model, reason=reason)
        return sum(v for _, v in found)

    def await_gauges(model, inflight, queued, what):
        end = time.monotonic() + WAIT_S
        got = None
        while time.monotonic() < end:
            s = scrape()
            got = (metrics.value(s, "onyx_inflight_requests", model=model, version="1"),
                   metrics.value(s, "onyx_queue_depth", model=model, version="1"))
            if got == (inflight, queued):
                return
            time.sleep(0.01)
        raise base.CaseFailure("%s: (in flight, queued) = %r, want %r" % (what, got, (inflight, queued)))

    def slow_request(iters, pad=0, model=deadline_test.MODEL):
        req = client.infer_request(model, "iters", "INT64", [1],
                                   raw=np.array([iters], dtype="<i8").tobytes())
        if pad:
            req.parameters["pad"].string_param = "p" * pad
        return req

    def slow_output(resp):
        return np.frombuffer(resp.raw_output_contents[0], dtype="<f4").reshape(deadline_test.N,
                                                                            deadline_test.N)

    def mlp_request(model="mlp", pad=0):
        x = np.random.default_rng(3).normal(0.0, 1.0, size=(2, 16)).astype(np.float32)
        req = client.infer_request(model, "input", "FP32", [2, 16], raw=x.tobytes())
        if pad:
            req.parameters["pad"].string_param = "p" * pad
        return req, x

    def expect_refusal(call, code, *phrases):
        try:
            call()
        except client.grpc.RpcError as e:
            check(e.code() == code, "%s %r, want %s" % (e.code(), e.details(), code))
            for phrase in phrases:
                check(phrase in (e.details() or ""), "%r does not say %r" % (e.details(), phrase))
            return dict(e.trailing_metadata() or ())
        raise base.CaseFailure("the request was served, want %s" % code)

    def pushback(trailers):
        value = trailers.get("grpc-retry-pushback-ms")
        check(value is not None and re.fullmatch(r"[1-9]\d*", value),
              "trailing metadata %r has no positive grpc-retry-pushback-ms" % trailers)
        return int(value)

    def start_blocker(pad=0, model=deadline_test.MODEL):
        blocker = client.stub.ModelInfer.future(
            slow_request(state["blocker_iters"], pad, model), timeout=120)
        await_gauges(model, 1, 0, "blocker running")
        return blocker

    def sizing():
        got = slow_output(client.infer(slow_request(1)))
        check(np.allclose(got, np.tanh(y0 @ w), rtol=1e-4, atol=1e-5), "slow: wrong output")
        start = time.monotonic()
        client.infer(slow_request(20))
        per_iter = max((time.monotonic() - start) / 20, 1e-5)
        state["blocker_iters"] = int(min(BLOCKER_ITERS_MAX, BLOCKER_SECONDS / per_iter))

    def queue_full():
        blocker = start_blocker()
        queued = client.stub.ModelInfer.future(slow_request(1), timeout=120)
        await_gauges(deadline_test.MODEL, 2, 1, "one request queued behind the blocker")
        trailers = expect_refusal(lambda: client.infer(slow_request(1)), SC.RESOURCE_EXHAUSTED,
                                  "queue full", "max_queue_size 1", "retry in about")
        pushback(trailers)
        check(not blocker.done(), "the blocker finished before the refusal")
        blocker.result()
        slow_output(queued.result())  # the queued one is served
        check(rejections(deadline_test.MODEL, "queue_full") == 1,
              "onyx_request_rejections_total{reason=queue_full} is not 1")

    def timeout_zero():
        req = slow_request(1)
        req.parameters["timeout"].int64_param = 0
        expect_refusal(lambda: client.infer(req), SC.DEADLINE_EXCEEDED, "before the request was queued")
        check(rejections(deadline_test.MODEL, "deadline_on_arrival") == 1,
              "onyx_request_rejections_total{reason=deadline_on_arrival} is not 1")

    def server_budget():
        huge, _ = mlp_request(pad=SERVER_BUDGET + 1)
        trailers = expect_refusal(lambda: client.infer(huge), SC.RESOURCE_EXHAUSTED,
                                  "server max_inflight_bytes %d" % SERVER_BUDGET, "can never be admitted")
        pushback(trailers)
        # 5 MiB in flight (the blocker) + 4 MiB > 8 MiB: refused until it is answered.
        blocker = start_blocker(pad=5 << 20)
        second, x = mlp_request(pad=4 << 20)
        expect_refusal(lambda: client.infer(second), SC.RESOURCE_EXHAUSTED,
                       "server max_inflight_bytes", "request bytes in flight")
        check(not blocker.done(), "the blocker finished before the refusal")
        blocker.result()
        await_gauges(deadline_test.MODEL, 0, 0, "blocker answered")
        resp = client.infer(second)
        base.expect_close(base.output_array(resp, "probabilities"), base.mlp_forward(params, x))
        check(rejections("mlp", "server_inflight_bytes") == 2,
              "onyx_request_rejections_total{model=mlp,reason=server_inflight_bytes} is not 2")

    def model_budget():
        req, x = mlp_request("mlp_capped")
        resp = client.infer(req)
        base.expect_close(base.output_array(resp, "probabilities"), base.mlp_forward(params, x))
        big, _ = mlp_request("mlp_capped", pad=MODEL_BUDGET)
        pushback(expect_refusal(lambda: client.infer(big), SC.RESOURCE_EXHAUSTED,
                                "dynamic_batching.max_inflight_bytes %d" % MODEL_BUDGET))
        resp = client.infer(req)  # the refusal held nothing
        base.expect_close(base.output_array(resp, "probabilities"), base.mlp_forward(params, x))
        check(rejections("mlp_capped", "model_inflight_bytes") == 1,
              "onyx_request_rejections_total{model=mlp_capped,reason=model_inflight_bytes} is not 1")

    x_amp = np.random.default_rng(5).normal(0.0, 1.0, size=(1, 16)).astype(np.float32)
    want_tile = np.tile(x_amp, (1, stream_test.TILES))

    def amplify_request(rid):
        req = pb.ModelInferRequest(model_name="amplify", id=rid)
        req.inputs.add(name="x", datatype="FP32", shape=[1, 16])
        req.raw_input_contents.append(x_amp.tobytes())
        return req

    def stall(taken, prefix):
        """Waits until neither the client's count nor the server's answered
        count moves for STILL_S: the client is held back."""
        start = time.monotonic()
        last, last_change = (taken[0], stream_test.answered(prefix)), start
        while time.monotonic() - last_change < stream_test.STILL_S:
            check(time.monotonic() - start < WAIT_S,
                  "the client was not held back within %.0f s" % WAIT_S)
            time.sleep(0.25)
            now = (taken[0], stream_test.answered(prefix))
            if now != last:
                last, last_change = now, time.monotonic()
        return last

    def stream_uniform_replies():
        taken = [0]

        def requests():
            for i in range(100000):
                taken[0] = i + 1
                yield amplify_request("u%d" % i)

        stream = client.stub.ModelStreamInfer(requests(), timeout=180)
        stalled_at, server_answered = stall(taken, "u")
        bound = STREAM_BUFFER // AMPLIFY_REPLY + REPLY_TRANSPORT_SLACK
        check(server_answered <= bound,
              "onyxd answered %d requests of a stream that read nothing; want <= %d (%d replies "
              "in a %d-byte buffer + %d in the transport)"
              % (server_answered, bound, STREAM_BUFFER // AMPLIFY_REPLY, STREAM_BUFFER,
                 REPLY_TRANSPORT_SLACK))
        got = 0
        for resp in stream:
            check(not resp.error_message, "reply %d failed: %s" % (got, resp.error_message))
            base.expect_close(base.output_array(resp.infer_response, "y"), want_tile)
            got += 1
            if got == server_answered + 50:
                break
        stream.cancel()
        print("  note: uniform replies: onyxd answered %d while the client read nothing" % server_answered)

    def stream_mixed_replies():
        before = rejections(WIDE, "stream_buffer_full")
        taken = [0]
        mlp_req, mlp_x = mlp_request()
        mlp_req.id = "m0"
        blocker = start_blocker(model=WIDE)

        def requests():
            taken[0] = 1
            yield mlp_req  # a small reply first: the window opens wide
            for i in range(WIDE_REQUESTS):
                req = slow_request(1, model=WIDE)
                req.id = "w%d" % i
                taken[0] = i + 2
                yield req

        stream = client.stub.ModelStreamInfer(requests(), timeout=180)
        # All of them wait behind the blocker, then complete in one burst.
        await_gauges(WIDE, 1 + WIDE_REQUESTS, WIDE_REQUESTS, "the stream's requests queued")
        blocker.result()
        stall(taken, "w")
        want = np.tanh(wide_y0 @ wide_w)
        ok = errors = 0
        for resp in stream:
            rid = resp.infer_response.id
            if rid == "m0":
                check(not resp.error_message, "the mlp reply failed: %s" % resp.error_message)
                base.expect_close(base.output_array(resp.infer_response, "probabilities"),
                                  base.mlp_forward(params, mlp_x))
                continue
            if resp.error_message:
                check("stream reply buffer full" in resp.error_message and
                      "max_stream_buffer_bytes %d" % STREAM_BUFFER in resp.error_message,
                      "reply %s: unexpected error %r" % (rid, resp.error_message))
                errors += 1
            else:
                got = slow_output(resp.infer_response)
                check(np.allclose(got, want, rtol=1e-4, atol=1e-5), "reply %s is wrong" % rid)
                ok += 1
            if ok + errors == WIDE_REQUESTS:
                break
        stream.cancel()
        check(errors > 0, "no reply was refused although %d replies of 256 KiB met a 1 MiB buffer "
              "the client did not read" % (ok + errors))
        got = rejections(WIDE, "stream_buffer_full") - before
        check(got == errors, "onyx_request_rejections_total{reason=stream_buffer_full} grew by %g, "
              "the client saw %d such errors" % (got, errors))
        print("  note: burst of replies: %d served, %d refused for the buffer" % (ok, errors))

    def still_serving():
        req, x = mlp_request()
        base.expect_close(base.output_array(client.infer(req), "probabilities"),
                          base.mlp_forward(params, x))

    return [
        ("slow_model_sizing", sizing),
        ("full_queue_is_resource_exhausted_with_retry_pushback", queue_full),
        ("timeout_zero_is_refused_before_queueing", timeout_zero),
        ("server_byte_budget", server_budget),
        ("model_byte_budget", model_budget),
        ("stream_never_read_uniform_replies_bounded", stream_uniform_replies),
        ("stream_never_read_overflow_answered_with_errors", stream_mixed_replies),
        ("server_still_serves", still_serving),
    ]


def main():
    config_dir = tempfile.mkdtemp(prefix="onyx_overload_cfg_")
    try:
        config = os.path.join(config_dir, "server.yaml")
        with open(config, "w") as f:
            f.write("max_inflight_bytes: %d\nmax_stream_buffer_bytes: %d\n"
                    % (SERVER_BUDGET, STREAM_BUFFER))
        return base.run_suite(__doc__, "onyx_overload_", prepare, build_cases,
                              extra_args=("--config", config, "--request-log-sample-rate", "1"),
                              log_level="info")
    finally:
        shutil.rmtree(config_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
