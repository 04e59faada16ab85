"""The overload rows of the attack and fault matrix (matrix_test.py), every
RPC in the ledger:

  - twice a model's measured capacity for 60 s in open loop: goodput (OK
    answers per second) at least 90% of capacity, the P99 latency of the
    answered requests (less any time the machine itself stood still, which
    liveness.StallWatch sees) within the model's SLO (the `timeout` every
    request carries), onyxd's peak RSS within 25% of its RSS at capacity, and
    only OK, RESOURCE_EXHAUSTED (queue full) or DEADLINE_EXCEEDED for the rest;
  - a request with a 50 ms `timeout` queued behind a long run is answered
    DEADLINE_EXCEEDED without running (ModelStatistics' execution count);
  - 1,000 requests a second for 5 s with half of them cancelled by the client
    at random within 5 ms: every RPC gets one final status, every OK answer
    is right, the cancelled ones end CANCELLED or OK.
Models: deadline_test's Loop model (a request chooses its run time by
`iters`), loaded as `slow` (one worker, one thread, default queue) and as
`busy` (the same with max_queue_size 4: a full queue waits at most 4 runs of
40 ms, within the SLO; runs that long keep the request rate, and so the load
the Python client itself puts on a 2-core machine, low); the matrix's `mlp`.
"""
import contextlib
import os
import random
import shutil
import threading
import time

import numpy as np

import deadline_test
import python_client_test as base
from ledger import Canceller, gauge_sum, sample_process, scrape

CaseFailure, check = base.CaseFailure, base.check

OVERLOAD_S = 60.0
CAPACITY_S = 5.0
SLO_S = 0.25              # the `timeout` of every request of the capacity row
BUSY_RUN_S = 0.04         # one `busy` request's run time (sized from a measured run)
BLOCKER_S = 1.5           # the long run the deadline probe queues behind
PROBE_TIMEOUT_US = 50000
CANCEL_RATE = 1000.0
CANCEL_S = 5.0
WAIT_S = 30.0


def overload_rows(m, mlp_dir):
    SC = m.SC
    pb = m.client.pb
    rng = np.random.default_rng(11)
    state = {}

    def prepare():
        """Writes `slow` and `busy` into the repository (once) and sizes one
        iteration of the Loop."""
        if state:
            return
        w, y0 = deadline_test.write_repository(m.repo, rng)
        busy = os.path.join(m.repo, "busy")
        shutil.copytree(os.path.join(m.repo, deadline_test.MODEL), busy)
        with open(os.path.join(busy, "config.yaml"), "w") as f:
            f.write(deadline_test.CONFIG.replace("  max_queue_delay_us: 0\n",
                                                 "  max_queue_delay_us: 0\n  max_queue_size: 4\n"))
        with loaded(deadline_test.MODEL):
            t0 = time.monotonic()
            m.client.infer(request(deadline_test.MODEL, 20))
            per_iter = (time.monotonic() - t0) / 20
        state.update(w=w, y0=y0, per_iter=per_iter,
                     busy_iters=max(1, int(BUSY_RUN_S / per_iter)),
                     blocker_iters=max(10, int(BLOCKER_S / per_iter)))

    @contextlib.contextmanager
    def loaded(model):
        """`model` loaded for the block: the invariants after each row see
        onyxd's threads without it."""
        m.client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=model), timeout=120)
        try:
            yield
        finally:
            m.client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name=model), timeout=60)

    def request(model, iters, timeout_us=None):
        req = m.client.infer_request(model, "iters", "INT64", [1], raw=np.array([iters], dtype="<i8").tobytes())
        if timeout_us is not None:
            req.parameters["timeout"].int64_param = timeout_us
        return req

    def model_gauges(model):
        metrics = scrape(m.metrics_address)
        return gauge_sum(metrics, "onyx_inflight_requests", model), gauge_sum(metrics, "onyx_queue_depth", model)

    def await_gauges(model, want, what):
        end = time.monotonic() + WAIT_S
        got = None
        while time.monotonic() < end:
            got = model_gauges(model)
            if got == want:
                return
            time.sleep(0.01)
        raise CaseFailure("%s: (in flight, queued) %r, want %r" % (what, got, want))

    def executions(model):
        r = m.client.stub.ModelStatistics(pb.ModelStatisticsRequest(name=model), timeout=10)
        return r.model_stats[0].execution_count

    def deadline_behind_a_long_run():
        prepare()
        model = deadline_test.MODEL
        with loaded(model):
            before = executions(model)
            blocker_id = m.ledger.sent("row")
            blocker = m.client.stub.ModelInfer.future(request(model, state["blocker_iters"]), timeout=120)
            try:
                await_gauges(model, (1, 0), "the long run started")
                m.expect_status(lambda: m.client.infer(request(model, 1, PROBE_TIMEOUT_US)), SC.DEADLINE_EXCEEDED,
                                "deadline")
            finally:
                blocker.result()
                m.ledger.finished(blocker_id, "OK")
            await_gauges(model, (0, 0), "drained")
            check(executions(model) == before + 1, "executions grew by %d, want 1 (the long run only)" % (
                executions(model) - before))

    def half_cancelled_at_1k():
        p = base.load_initializers(os.path.join(mlp_dir, "1", "model.onnx"))
        xs = [np.random.default_rng(i).standard_normal((1, 16)).astype(np.float32) for i in range(16)]
        wants = [base.mlp_forward(p, x) for x in xs]
        canceller = Canceller()
        canceller.start()
        codes = {}
        lock = threading.Lock()
        pick = random.Random(5)

        def done(rid, future):
            if future.cancelled():
                code, got, detail = "CANCELLED", None, None
            elif future.exception() is not None:
                code, got, detail = future.exception().code().name, None, future.exception().details()
            else:
                code, got, detail = "OK", base.output_array(future.result(), "probabilities"), None
            m.ledger.finished(rid, code, got, detail=detail)
            with lock:
                codes[code] = codes.get(code, 0) + 1

        futures = []
        start = time.monotonic()
        n = 0
        while time.monotonic() - start < CANCEL_S:
            at = start + n / CANCEL_RATE
            now = time.monotonic()
            if at > now:
                time.sleep(at - now)
            k = n % len(xs)
            rid = m.ledger.sent("row", wants[k])
            future = m.client.stub.ModelInfer.future(
                m.client.infer_request("mlp", "input", "FP32", [1, 16], raw=xs[k].tobytes()), timeout=30)
            if pick.random() < 0.5:
                m.ledger.cancel_requested(rid)
                canceller.schedule(time.monotonic() + pick.uniform(0, 0.005), future)
            future.add_done_callback(lambda f, rid=rid: done(rid, f))
            futures.append(future)
            n += 1
        sent_s = time.monotonic() - start
        for f in futures:
            try:
                f.result(timeout=60)
            except Exception:  # noqa: BLE001 - outcomes are in the ledger
                pass
        canceller.done = True
        canceller.join(timeout=10)
        rate = n / sent_s
        check(rate >= 0.8 * CANCEL_RATE, "sent %.0f requests/s, want about %.0f" % (rate, CANCEL_RATE))
        check(codes.get("CANCELLED", 0) > 0 and codes.get("OK", 0) > 0, "outcomes %s" % codes)
        print("     cancellations: %.0f requests/s, outcomes %s" % (rate, codes))

    def twice_capacity_for_60s():
        prepare()
        with loaded("busy"):
            capacity_row()

    def capacity_row():
        model = "busy"
        iters = state["busy_iters"]
        slo_us = int(SLO_S * 1e6)
        # Capacity: two closed-loop clients keep the one worker busy.
        done_count = [0]
        stop = threading.Event()

        def closed_loop():
            while not stop.is_set():
                m.client.infer(request(model, iters))
                done_count[0] += 1
        clients = [threading.Thread(target=closed_loop) for _ in range(2)]
        t0 = time.monotonic()
        for t in clients:
            t.start()
        time.sleep(CAPACITY_S)
        stop.set()
        for t in clients:
            t.join()
        capacity = done_count[0] / (time.monotonic() - t0)
        rss_at_capacity = sample_process(m.proc.pid, 0).rss_bytes

        # Twice that, open loop, every request with the SLO as its timeout.
        rate = 2.0 * capacity
        outcomes = []
        lock = threading.Lock()
        peak_rss = [rss_at_capacity]

        def done(rid, sent_at, future):
            latency = time.monotonic() - sent_at
            e = future.exception()
            code = "OK" if e is None else e.code().name
            if code in ("RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"):
                m.ledger.refused_as_expected(rid)  # the policy's refusals
            else:
                m.ledger.finished(rid, code, detail=None if e is None else e.details())
            with lock:
                outcomes.append((sent_at, code, latency))

        def watch_rss():
            while not stop_rss.is_set():
                peak_rss[0] = max(peak_rss[0], sample_process(m.proc.pid, 0).rss_bytes)
                stop_rss.wait(0.5)
        stop_rss = threading.Event()
        watcher = threading.Thread(target=watch_rss)
        watcher.start()
        futures = []
        start = time.monotonic()
        n = 0
        try:
            while time.monotonic() - start < OVERLOAD_S:
                at = start + n / rate
                now = time.monotonic()
                if at > now:
                    time.sleep(at - now)
                rid = m.ledger.sent("row")
                future = m.client.stub.ModelInfer.future(request(model, iters, slo_us), timeout=30)
                future.add_done_callback(lambda f, rid=rid, at=time.monotonic(): done(rid, at, f))
                futures.append(future)
                n += 1
            for f in futures:
                try:
                    f.result(timeout=60)
                except Exception:  # noqa: BLE001 - outcomes are in the ledger
                    pass
        finally:
            stop_rss.set()
            watcher.join()
        sent_s = time.monotonic() - start
        stalls = m.stall_watch.stalls()
        with lock:
            # Latency less any time the machine itself stood still (StallWatch).
            ok = sorted(lat - m.stall_watch.overlap(sent, sent + lat, stalls) for sent, code, lat in outcomes
                        if code == "OK")
            counts = {}
            for _, code, _ in outcomes:
                counts[code] = counts.get(code, 0) + 1
        goodput = len(ok) / OVERLOAD_S
        p99 = ok[min(len(ok) - 1, int(0.99 * len(ok)))] if ok else float("inf")
        state["overload"] = dict(capacity=round(capacity, 1), offered=round(n / sent_s, 1), goodput=round(goodput, 1),
                                 p99_ms=round(p99 * 1000, 1), peak_rss_mb=round(peak_rss[0] / 2**20, 1),
                                 rss_at_capacity_mb=round(rss_at_capacity / 2**20, 1), outcomes=counts,
                                 machine_stalls_ms=round(1e3 * m.stall_watch.overlap(start, start + sent_s, stalls)))
        check(goodput >= 0.9 * capacity, "goodput %.1f/s under 90%% of capacity %.1f/s (%s)" % (
            goodput, capacity, state["overload"]))
        check(p99 <= SLO_S, "P99 of answered requests %.0f ms over the %d ms SLO (%s)" % (
            p99 * 1000, SLO_S * 1000, state["overload"]))
        check(peak_rss[0] <= 1.25 * rss_at_capacity, "peak RSS %.1f MB over 1.25 x %.1f MB (%s)" % (
            peak_rss[0] / 2**20, rss_at_capacity / 2**20, state["overload"]))
        print("     overload: %s" % state["overload"])

    return [
        ("overload_deadline_behind_a_long_run", deadline_behind_a_long_run),
        ("overload_half_cancelled_at_1k_per_second", half_cancelled_at_1k),
        ("overload_twice_capacity_for_60s", twice_capacity_for_60s),
    ]
