#!/usr/bin/python3
"""End-to-end test of onyxd's graceful shutdown and its JSON logs.

usage: shutdown_test.py --onyxd BIN --proto-dir DIR --repo DIR

Starts BIN on the demo repository with `--shutdown-linger-seconds 1
--log-format json --request-log-sample-rate 1 --log-level info`, then:
  1. SIGUSR1 writes the engine's arena accounting to the log;
  2. CLIENTS threads send mlp requests back to back (each answer is compared
     with a numpy forward pass); mid-traffic the test sends SIGTERM;
  3. 100 ms after the signal ServerReady is false and grpc.health reports
     NOT_SERVING, while requests sent during the linger still succeed;
  4. requests sent after the linger (plus slack) are refused with UNAVAILABLE
     (the server's "shutting down" or a refused connection);
  5. onyxd exits 0; every stderr line is a JSON object with ts (RFC 3339 UTC,
     microseconds), level, logger and msg; every served request has its
     "request" line (sample rate 1);
  6. no accepted request is lost: every request with a request line (it reached
     its model) was answered OK with the numpy result, and every other failure
     is a refusal of a request that never reached a model — UNAVAILABLE, or
     CANCELLED for a call arriving in the instant gRPC shuts down.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed";
exits non-zero on any failure.
"""

import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402  stubs, server start/stop, numpy reference

CLIENTS = 4
LINGER_S = 1.0
READY_DROP_S = 0.1        # readiness must be down this soon after SIGTERM
SERVED_UNTIL_S = 0.7      # requests sent this soon after SIGTERM must succeed
REFUSED_AFTER_S = 1.6     # requests sent this late must be refused
TRAFFIC_BEFORE_S = 0.3
EXIT_TIMEOUT_S = 30
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
REFUSAL_MARKS = ("shutting down", "connect", "refused", "GOAWAY", "Socket closed")


def wait_for_log(path, needle, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with open(path, "rb") as f:
            if needle in f.read():
                return True
        time.sleep(0.05)
    return False


def main():
    args = base.parse_args(__doc__)
    tmp = tempfile.mkdtemp(prefix="onyx_shutdown_")
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    proc = None
    results = []          # (thread, id, sent_at, ok, code, details, correct)
    outcomes = []         # (name, failure or None)
    try:
        mods = base.stubs_in(args.proto_dir, tmp)
        if mods is None:
            print("0 passed, 1 failed")
            return 1
        proc, address, _, failure = base.launch_onyxd(
            args.onyxd, args.repo, mods, tmp, log_level="info",
            extra_args=["--shutdown-linger-seconds", str(int(LINGER_S)), "--log-format", "json",
                        "--request-log-sample-rate", "1"])
        if failure is not None:
            print("0 passed, 1 failed")
            return 1
        import grpc
        pb = mods["grpc_service_pb2"]
        hpb = mods["health_pb2"]
        params = base.load_initializers(os.path.join(args.repo, "mlp", "1", "model.onnx"))

        def record(name, fn):
            outcomes.append((name, base.case_failure(fn)))

        # 1. SIGUSR1 → arena accounting in the log.
        def arena_dump():
            proc.send_signal(signal.SIGUSR1)
            base.check(wait_for_log(stderr_path, b"arena accounting (SIGUSR1)"),
                       "no arena accounting in the log 10 s after SIGUSR1")
            base.check(wait_for_log(stderr_path, b"arena cpu: in use"),
                       "the SIGUSR1 line lacks the arena's numbers")
        record("sigusr1_arena_dump", arena_dump)

        # 2. Traffic from CLIENTS threads, each on its own channel.
        stop_at = [None]
        lock = threading.Lock()

        def client(k):
            rng = np.random.default_rng(1000 + k)
            channel = grpc.insecure_channel(address)
            stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
            n = 0
            while stop_at[0] is None or time.monotonic() < stop_at[0]:
                rows = int(rng.integers(1, 5))
                x = rng.normal(0.0, 1.0, size=(rows, 16)).astype(np.float32)
                req = pb.ModelInferRequest(model_name="mlp", id="c%d-%d" % (k, n))
                req.inputs.add(name="input", datatype="FP32", shape=[rows, 16])
                req.raw_input_contents.append(x.tobytes())
                sent = time.monotonic()
                try:
                    resp = stub.ModelInfer(req, timeout=base.RPC_TIMEOUT_S)
                    got = np.frombuffer(resp.raw_output_contents[0], "<f4").reshape(rows, 4)
                    correct = (resp.id == req.id and np.allclose(
                        got, base.mlp_forward(params, x), rtol=base.RTOL, atol=base.ATOL))
                    entry = (k, req.id, sent, True, None, "", correct)
                except grpc.RpcError as e:
                    entry = (k, req.id, sent, False, e.code(), e.details() or "", None)
                    time.sleep(0.01)  # refused: do not spin
                with lock:
                    results.append(entry)
                n += 1
            channel.close()

        threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(TRAFFIC_BEFORE_S)
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        stop_at[0] = signalled + REFUSED_AFTER_S + 0.5

        # 3. Readiness and health drop at once.
        def not_ready_at_once():
            time.sleep(max(0.0, signalled + READY_DROP_S - time.monotonic()))
            with grpc.insecure_channel(address) as channel:
                stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
                health = mods["health_pb2_grpc"].HealthStub(channel)
                ready = stub.ServerReady(pb.ServerReadyRequest(), timeout=2).ready
                status = health.Check(hpb.HealthCheckRequest(service=""), timeout=2).status
                asked_at = time.monotonic() - signalled
            base.check(asked_at < LINGER_S, "checks ran %.2f s after SIGTERM" % asked_at)
            base.check(not ready, "ServerReady is true %.0f ms after SIGTERM" % (asked_at * 1e3))
            base.check(status == hpb.HealthCheckResponse.NOT_SERVING,
                       "health is %s after SIGTERM"
                       % hpb.HealthCheckResponse.ServingStatus.Name(status))
        record("not_ready_within_100ms_of_sigterm", not_ready_at_once)

        for t in threads:
            t.join()
        try:
            code = proc.wait(timeout=EXIT_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - reported below
            code = None

        def served_during_linger():
            during = [r for r in results if signalled <= r[2] < signalled + SERVED_UNTIL_S]
            base.check(len(during) >= CLIENTS, "only %d requests sent during the linger"
                       % len(during))
            bad = [r for r in during if not r[3]]
            base.check(not bad, "%d of %d requests sent during the linger failed, e.g. %s %s"
                       % (len(bad), len(during), bad[0][4] if bad else "",
                          bad[0][5] if bad else ""))
        record("requests_during_linger_succeed", served_during_linger)

        def refused_after_linger():
            late = [r for r in results if r[2] >= signalled + REFUSED_AFTER_S]
            base.check(late, "no request was sent after the linger")
            accepted = [r for r in late if r[3]]
            base.check(not accepted, "%d requests sent %.1f s after SIGTERM were served"
                       % (len(accepted), REFUSED_AFTER_S))
            # CANCELLED: gRPC's own answer in the instant it shuts down;
            # no_accepted_request_lost checks that such a call never reached a model.
            wrong = [r for r in late if r[4] not in (grpc.StatusCode.UNAVAILABLE,
                                                     grpc.StatusCode.CANCELLED)]
            base.check(not wrong, "late request got %s (%s), want UNAVAILABLE"
                       % (wrong[0][4], wrong[0][5]) if wrong else "")
        record("requests_after_linger_unavailable", refused_after_linger)

        def exit_zero():
            base.check(code == 0, "exit status %s, want 0" % code)
        record("exit_code_zero", exit_zero)

        logged = {}  # request id → status name, from the "request" log lines

        def json_logs():
            with open(stderr_path, "rb") as f:
                lines = f.read().decode("utf-8").splitlines()
            base.check(lines, "stderr is empty")
            for i, line in enumerate(lines):
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise base.CaseFailure("stderr line %d is not JSON (%s): %r" % (i + 1, e, line))
                base.check(isinstance(obj, dict) and sorted(obj) == ["level", "logger", "msg", "ts"],
                           "line %d has keys %r" % (i + 1, sorted(obj) if isinstance(obj, dict)
                                                    else obj))
                base.check(TS_RE.match(obj["ts"]), "line %d: ts %r" % (i + 1, obj["ts"]))
                if obj["logger"] == "request":
                    m = re.match(r'model="mlp" version="1" id="([^"]*)" status=(\w+) '
                                 r'total_us=\d+ batch_size=([1-4])$', obj["msg"])
                    base.check(m, "request line %r" % obj["msg"])
                    base.check(m.group(1) not in logged, "two lines for request %s" % m.group(1))
                    logged[m.group(1)] = m.group(2)
            unlogged = [r[1] for r in results if r[3] and r[1] not in logged]
            base.check(not unlogged, "%d served requests have no request line (e.g. %s)"
                       % (len(unlogged), unlogged[0] if unlogged else ""))
        record("json_log_lines_and_request_sampling", json_logs)

        # A request is accepted when it reaches the model (it then has a request
        # line, sample rate 1). Refusals are UNAVAILABLE, or CANCELLED for calls
        # that reach gRPC in the instant it shuts down; neither may have been
        # accepted.
        def no_lost_requests():
            base.check(any(r[3] for r in results), "no request succeeded")
            incorrect = [r for r in results if r[3] and not r[6]]
            base.check(not incorrect, "%d answers differ from the numpy reference (e.g. %s)"
                       % (len(incorrect), incorrect[0][1] if incorrect else ""))
            served = {r[1] for r in results if r[3]}
            not_ok = [(i, st) for i, st in logged.items() if st != "OK" or i not in served]
            base.check(not not_ok, "%d accepted requests were not served, e.g. %s (%s)"
                       % (len(not_ok), not_ok[0][0], not_ok[0][1]) if not_ok else "")

            def refused(r):
                if r[1] in logged:
                    return False
                if r[4] == grpc.StatusCode.UNAVAILABLE:
                    return any(m in r[5] for m in REFUSAL_MARKS)
                return r[4] == grpc.StatusCode.CANCELLED and r[2] >= signalled + SERVED_UNTIL_S
            lost = [r for r in results if not r[3] and not refused(r)]
            base.check(not lost, "%d requests failed other than by refusal, e.g. %s sent %.3f s "
                       "after SIGTERM: %s %s" % (len(lost), lost[0][1], lost[0][2] - signalled,
                                                 lost[0][4], lost[0][5]) if lost else "")
        record("no_accepted_request_lost", no_lost_requests)
    finally:
        if proc is not None:
            base.stop(proc)
        if any(f is not None for _, f in outcomes):
            print("--- onyxd stderr (tail) ---\n" + base.tail(stderr_path))
        shutil.rmtree(tmp, ignore_errors=True)
    return base.report(outcomes)


if __name__ == "__main__":
    sys.exit(main())
