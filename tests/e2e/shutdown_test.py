#!/usr/bin/python3
"""End-to-end test of onyxd's graceful shutdown and its JSON logs.

usage: shutdown_test.py --onyxd BIN --proto-dir DIR --repo DIR

Starts BIN on the demo repository with `--shutdown-linger-seconds 2
--log-format json --request-log-sample-rate 1 --log-level info`, then:
  1. SIGUSR1 writes the engine's arena accounting to the log;
  2. CLIENTS threads send mlp requests back to back (each answer is compared
     with a numpy forward pass); mid-traffic the test sends SIGTERM;
  3. once onyxd has logged the signal (it turns not ready first), ServerReady
     is false and grpc.health reports NOT_SERVING;
  4. during the linger, between the signal's log line and "linger over", onyxd
     serves: it logs requests served OK in between, and no client is refused
     before "linger over" is in the log (checked at each refusal);
  5. after "linger over" every client is refused from its first refusal on
     (UNAVAILABLE: the server's "shutting down" or a refused connection);
  6. onyxd exits 0; every stderr line is a JSON object with ts (RFC 3339 UTC,
     microseconds), level, logger and msg; every served request has its
     "request" line (sample rate 1);
  7. no accepted request is lost: every request with a request line (it reached
     its model) was answered OK with the numpy result, and every other failure
     is a refusal of a request that never reached a model — UNAVAILABLE, or
     CANCELLED for a call arriving as gRPC shuts down, after "linger over".
Every step waits for an event (a log line, a reply) with a generous timeout,
never for a wall-clock window, so a slow machine makes it slower, not red.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed";
exits non-zero on any failure.
"""

import collections
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
LINGER_S = 2
TRAFFIC_BEFORE_S = 0.3
EVENT_TIMEOUT_S = 60.0    # for a log line or the clients' refusals to show up
EXIT_TIMEOUT_S = 30
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
REFUSAL_MARKS = ("shutting down", "connect", "refused", "GOAWAY", "Socket closed")
SIGTERM_LINE = b"received SIGTERM: not ready"
LINGER_OVER_LINE = b"linger over: refusing new inference calls"


# One request: client index, id, whether it was sent after the test saw "linger
# over", whether it succeeded, the status code and details of a failure, whether
# a success matched numpy, and whether "linger over" was logged when it failed.
Result = collections.namedtuple("Result", "client id after_linger_over ok code details correct "
                                          "linger_over_logged")


def logged(path, needle):
    with open(path, "rb") as f:
        return needle in f.read()


def wait_for_log(path, needle, timeout_s=EVENT_TIMEOUT_S):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if logged(path, needle):
            return True
        time.sleep(0.02)
    return False


def request_lines(path):
    """{request id: (status name, ts)} from the JSON "request" log lines."""
    found = {}
    with open(path, "rb") as f:
        for line in f:
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # json_log_lines_and_request_sampling reports it
            m = re.search(r'id="([^"]*)" status=(\w+)', obj.get("msg", "")) if obj.get("logger") == "request" else None
            if m:
                found[m.group(1)] = (m.group(2), obj["ts"])
    return found


def log_ts(path, needle):
    """The ts of the first JSON log line whose msg contains needle."""
    with open(path, "rb") as f:
        for line in f:
            if needle in line:
                return json.loads(line)["ts"]
    return None


def main():
    args = base.parse_args(__doc__)
    tmp = tempfile.mkdtemp(prefix="onyx_shutdown_")
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    proc = None
    results = []          # Result per request
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

        # 2. Traffic from CLIENTS threads, each on its own channel. A refusal
        # records whether "linger over" was already in the log; requests sent
        # after the test saw that line are marked.
        stop = threading.Event()
        saw_linger_over = threading.Event()
        lock = threading.Lock()
        refused_after_line = [0] * CLIENTS

        def client(k):
            rng = np.random.default_rng(1000 + k)
            channel = grpc.insecure_channel(address)
            stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
            n = 0
            while not stop.is_set():
                rows = int(rng.integers(1, 5))
                x = rng.normal(0.0, 1.0, size=(rows, 16)).astype(np.float32)
                req = pb.ModelInferRequest(model_name="mlp", id="c%d-%d" % (k, n))
                req.inputs.add(name="input", datatype="FP32", shape=[rows, 16])
                req.raw_input_contents.append(x.tobytes())
                after = saw_linger_over.is_set()
                try:
                    resp = stub.ModelInfer(req, timeout=base.RPC_TIMEOUT_S)
                    got = np.frombuffer(resp.raw_output_contents[0], "<f4").reshape(rows, 4)
                    correct = (resp.id == req.id and np.allclose(
                        got, base.mlp_forward(params, x), rtol=base.RTOL, atol=base.ATOL))
                    entry = Result(k, req.id, after, True, None, "", correct, None)
                except grpc.RpcError as e:
                    entry = Result(k, req.id, after, False, e.code(), e.details() or "", None,
                                   logged(stderr_path, LINGER_OVER_LINE))
                    if after:
                        refused_after_line[k] += 1
                    time.sleep(0.01)  # refused: do not spin
                with lock:
                    results.append(entry)
                n += 1
            channel.close()

        threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(TRAFFIC_BEFORE_S)
        proc.send_signal(signal.SIGTERM)

        # 3. onyxd turns not ready before it logs the signal.
        def not_ready_once_sigterm_logged():
            base.check(wait_for_log(stderr_path, SIGTERM_LINE),
                       "no %r in the log %.0f s after SIGTERM" % (SIGTERM_LINE.decode(), EVENT_TIMEOUT_S))
            with grpc.insecure_channel(address) as channel:
                stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
                health = mods["health_pb2_grpc"].HealthStub(channel)
                ready = stub.ServerReady(pb.ServerReadyRequest(), timeout=base.RPC_TIMEOUT_S).ready
                status = health.Check(hpb.HealthCheckRequest(service=""), timeout=base.RPC_TIMEOUT_S).status
            base.check(not ready, "ServerReady is true after onyxd logged SIGTERM")
            base.check(status == hpb.HealthCheckResponse.NOT_SERVING,
                       "health is %s after onyxd logged SIGTERM"
                       % hpb.HealthCheckResponse.ServingStatus.Name(status))
            if logged(stderr_path, LINGER_OVER_LINE):
                print("  note: the readiness checks ran after the linger (a slow machine)")
        record("not_ready_once_sigterm_is_logged", not_ready_once_sigterm_logged)

        # Then let every client be refused a few times after "linger over".
        linger_over = wait_for_log(stderr_path, LINGER_OVER_LINE)
        saw_linger_over.set()
        deadline = time.monotonic() + EVENT_TIMEOUT_S
        while linger_over and min(refused_after_line) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        for t in threads:
            t.join()
        try:
            code = proc.wait(timeout=EXIT_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - reported below
            code = None

        def served_during_linger():
            base.check(linger_over, "no %r in the log %.0f s after SIGTERM"
                       % (LINGER_OVER_LINE.decode(), EVENT_TIMEOUT_S))
            early = [r for r in results if not r.ok and not r.linger_over_logged]
            base.check(not early, "%d requests were refused before onyxd logged the end of the linger, "
                       "e.g. %s: %s %s" % (len(early), early[0].id, early[0].code, early[0].details)
                       if early else "")
            begin, end = log_ts(stderr_path, SIGTERM_LINE), log_ts(stderr_path, LINGER_OVER_LINE)
            during = {i: st for i, (st, ts) in request_lines(stderr_path).items() if begin < ts < end}
            base.check(during, "onyxd served no request between %s and %s" % (begin, end))
            bad = {i: st for i, st in during.items() if st != "OK"}
            base.check(not bad, "%d requests logged during the linger did not succeed, e.g. %r"
                       % (len(bad), sorted(bad.items())[:1]))
            print("  note: %d requests served during the linger" % len(during))
        record("requests_during_linger_succeed", served_during_linger)

        def refused_after_linger():
            base.check(min(refused_after_line) >= 3, "after the linger, clients were refused %r times, "
                       "want 3 each within %.0f s" % (refused_after_line, EVENT_TIMEOUT_S))
            for k in range(CLIENTS):
                late = [r for r in results if r.client == k and r.after_linger_over]
                first = next(i for i, r in enumerate(late) if not r.ok)
                served = [r.id for r in late[first:] if r.ok]
                base.check(not served, "client %d was served %s after being refused" % (k, served))
            # CANCELLED: gRPC's own answer in the instant it shuts down;
            # no_accepted_request_lost checks that such a call never reached a model.
            wrong = [r for r in results if r.after_linger_over and not r.ok and r.code not in (
                grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)]
            base.check(not wrong, "late request got %s (%s), want UNAVAILABLE"
                       % (wrong[0].code, wrong[0].details) if wrong else "")
        record("requests_after_linger_unavailable", refused_after_linger)

        def exit_zero():
            base.check(code == 0, "exit status %s, want 0" % code)
        record("exit_code_zero", exit_zero)

        lines_of = {}  # request id → (status name, ts), from the "request" log lines

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
                    base.check(m.group(1) not in lines_of, "two lines for request %s" % m.group(1))
                    lines_of[m.group(1)] = (m.group(2), obj["ts"])
            unlogged = [r.id for r in results if r.ok and r.id not in lines_of]
            base.check(not unlogged, "%d served requests have no request line (e.g. %s)"
                       % (len(unlogged), unlogged[0] if unlogged else ""))
        record("json_log_lines_and_request_sampling", json_logs)

        # A request is accepted when it reaches the model (it then has a request
        # line, sample rate 1). Refusals are UNAVAILABLE, or CANCELLED for calls
        # that reach gRPC in the instant it shuts down; neither may have been
        # accepted.
        def no_lost_requests():
            base.check(any(r.ok for r in results), "no request succeeded")
            incorrect = [r for r in results if r.ok and not r.correct]
            base.check(not incorrect, "%d answers differ from the numpy reference (e.g. %s)"
                       % (len(incorrect), incorrect[0].id if incorrect else ""))
            served = {r.id for r in results if r.ok}
            not_ok = [(i, st) for i, (st, _) in lines_of.items() if st != "OK" or i not in served]
            base.check(not not_ok, "%d accepted requests were not served, e.g. %s (%s)"
                       % (len(not_ok), not_ok[0][0], not_ok[0][1]) if not_ok else "")

            def refused(r):
                if r.id in lines_of:
                    return False
                if r.code == grpc.StatusCode.UNAVAILABLE:
                    return any(m in r.details for m in REFUSAL_MARKS)
                return r.code == grpc.StatusCode.CANCELLED and r.linger_over_logged
            lost = [r for r in results if not r.ok and not refused(r)]
            base.check(not lost, "%d requests failed other than by refusal, e.g. %s: %s %s"
                       % (len(lost), lost[0].id, lost[0].code, lost[0].details) if lost else "")
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
