"""An out-of-process liveness probe: ServerLive and grpc.health Check every
250 ms from a process of its own, so that the prober's timings do not wait on
the test process's GIL.

    probe = LivenessProbe(stub_dir, "127.0.0.1:8001")
    ...                                  # the scenario
    result = probe.stop()                # {"latencies_ms": [...], "failures": [...]}

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
    latencies, failures = [], []
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
            if not ok and len(failures) < 20:
                failures.append("%s answered not live / not serving" % name)
        stop.wait(INTERVAL_S)
    channel.close()
    with open(result_path, "w") as f:
        json.dump({"latencies_ms": latencies, "failures": failures}, f)


class LivenessProbe:
    def __init__(self, stub_dir, address):
        ctx = multiprocessing.get_context("spawn")
        self._stop = ctx.Event()
        fd, self._path = tempfile.mkstemp(prefix="onyx_probe_", suffix=".json")
        os.close(fd)
        self._proc = ctx.Process(target=_probe, args=(stub_dir, address, self._stop, self._path), daemon=True)
        self._proc.start()

    def stop(self):
        """Stops the probe; returns its latencies (ms) and failures."""
        self._stop.set()
        self._proc.join(timeout=30)
        try:
            with open(self._path) as f:
                text = f.read()
            return json.loads(text) if text else {"latencies_ms": [], "failures": ["the probe wrote nothing"]}
        finally:
            os.unlink(self._path)
