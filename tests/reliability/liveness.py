"""An out-of-process liveness probe: ServerLive and grpc.health Check every
250 ms from a process of its own, so that the prober's timings do not wait on
the test process's GIL; and StallWatch, which tells when the machine itself
stood still.

    probe = LivenessProbe(stub_dir, "127.0.0.1:8001")
    ...                                  # the scenario
    result = probe.stop()                # {"latencies_ms": [...], "started": [...], "failures": [...]}

`started` holds each probe's time.monotonic() at its start (CLOCK_MONOTONIC,
comparable across processes), so that a slow probe can be matched with what
the test was doing then.

`stub_dir` holds the generated Python stubs (python_client_test.stubs_in).
"""
import json
import multiprocessing
import os
import sys
import tempfile
import time

INTERVAL_S = 0.25
TIMEOUT_S = 2.0


def _probe(stub_dir, address, stop, result_path):
    import grpc
    sys.path.insert(0, stub_dir)
    import grpc_service_pb2 as pb
    import grpc_service_pb2_grpc as pbg
    import health_pb2 as hpb
    import health_pb2_grpc as hpbg
    channel = grpc.insecure_channel(address)
    stub, health = pbg.GRPCInferenceServiceStub(channel), hpbg.HealthStub(channel)
    calls = (("ServerLive", lambda: stub.ServerLive(pb.ServerLiveRequest(), timeout=TIMEOUT_S).live),
             ("Check", lambda: health.Check(hpb.HealthCheckRequest(), timeout=TIMEOUT_S).status ==
              hpb.HealthCheckResponse.SERVING))
    latencies, started, failures = [], [], []
    while not stop.is_set():
        for name, call in calls:
            t0 = time.monotonic()
            try:
                ok = call()
            except grpc.RpcError as e:
                ok = False
                if len(failures) < 20:
                    failures.append("%s: %s" % (name, e.code()))
            latencies.append((time.monotonic() - t0) * 1e3)
            started.append(t0)
            if not ok and len(failures) < 20:
                failures.append("%s answered not live / not serving" % name)
        stop.wait(INTERVAL_S)
    channel.close()
    with open(result_path, "w") as f:
        json.dump({"latencies_ms": latencies, "started": started, "failures": failures}, f)


class LivenessProbe:
    def __init__(self, stub_dir, address):
        ctx = multiprocessing.get_context("spawn")
        self._stop = ctx.Event()
        fd, self._path = tempfile.mkstemp(prefix="onyx_probe_", suffix=".json")
        os.close(fd)
        self._proc = ctx.Process(target=_probe, args=(stub_dir, address, self._stop, self._path), daemon=True)
        self._proc.start()

    def stop(self):
        """Stops the probe; returns its latencies (ms), start times and failures."""
        self._stop.set()
        self._proc.join(timeout=30)
        try:
            with open(self._path) as f:
                text = f.read()
            return json.loads(text) if text else {"latencies_ms": [], "started": [], "failures": ["the probe wrote nothing"]}
        finally:
            os.unlink(self._path)


STALL_TICK_S = 0.01
STALL_LATE_S = 0.03


def _watch(stop, path):
    with open(path, "w") as f:
        while not stop.is_set():
            t0 = time.monotonic()
            time.sleep(STALL_TICK_S)
            late = time.monotonic() - t0 - STALL_TICK_S
            if late > STALL_LATE_S:
                f.write("%.6f %.6f\n" % (t0 + STALL_TICK_S, t0 + STALL_TICK_S + late))
                f.flush()


class StallWatch:
    """Times when the machine itself stalled: a process of its own sleeps 10 ms
    at a time and records every wake more than 30 ms late. On two CPUs busy with
    onyxd and its clients, a sleeper that needs almost no CPU still wakes within
    a few ms; when it does not, nothing on the machine ran (the virtual machine
    was paused or starved by its host), and a latency over that span measures
    the host, not onyxd.

        watch = StallWatch()
        ...
        excess = watch.overlap(t0, t1)   # seconds of [t0, t1] the machine stood still
        watch.stop()
    """

    def __init__(self):
        ctx = multiprocessing.get_context("spawn")
        self._stop = ctx.Event()
        fd, self._path = tempfile.mkstemp(prefix="onyx_stalls_", suffix=".txt")
        os.close(fd)
        self._proc = ctx.Process(target=_watch, args=(self._stop, self._path), daemon=True)
        self._proc.start()

    def stalls(self):
        """[(start, end)] on time.monotonic(), so far."""
        with open(self._path) as f:
            return [tuple(float(v) for v in line.split()) for line in f if line.endswith("\n")]

    def overlap(self, t0, t1, stalls=None):
        """Seconds of [t0, t1] inside a stall."""
        return sum(max(0.0, min(t1, b) - max(t0, a)) for a, b in (self.stalls() if stalls is None else stalls))

    def stop(self):
        self._stop.set()
        self._proc.join(timeout=30)
        stalls = self.stalls()
        os.unlink(self._path)
        return stalls
