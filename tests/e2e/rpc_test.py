#!/usr/bin/python3
"""End-to-end test of onyxd's extension RPCs over loopback gRPC.

usage: rpc_test.py --onyxd BIN --proto-dir DIR --repo DIR

Covers ModelStatistics, ModelStreamInfer, RepositoryModelLoad/Unload (with
reloads under client traffic), system shared memory and Health.Watch. Copies
REPO (the demo repository from scripts/gen_demo_models.py) to a temporary
directory, since the cases add version directories, and starts BIN on it. Stubs
and helpers come from python_client_test.py beside this file. Prints "PASS
name" or "FAIL name: reason" per case and a final "N passed, M failed"; exits
non-zero on any failure.
"""

import os
import re
import shutil
import sys
import threading
import time
from multiprocessing import shared_memory

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402
from python_client_test import CaseFailure, check  # noqa: E402

RPC_TIMEOUT_S = base.RPC_TIMEOUT_S
EXTENSIONS = ("model_repository", "model_configuration", "statistics", "system_shared_memory",
              "binary_tensor_data")


def build_cases(client, repo):
    pb = client.pb
    hpb = client.hpb
    grpc = client.grpc
    SC = grpc.StatusCode
    rng = np.random.default_rng(4321)
    mlp_p = base.load_initializers(os.path.join(repo, "mlp", "1", "model.onnx"))
    x3 = rng.normal(0.0, 1.0, size=(3, 16)).astype(np.float32)
    x1 = rng.normal(0.0, 1.0, size=(1, 16)).astype(np.float32)

    def mlp_request(x, version="", rid=""):
        req = client.infer_request("mlp", "input", "FP32", list(x.shape), raw=x.tobytes(),
                                   outputs=["probabilities"])
        req.model_version = version
        req.id = rid
        return req

    def expect_rpc_error(fn, codes, must_mention=None):
        try:
            fn()
        except grpc.RpcError as e:
            check(e.code() in codes, "status %s (%s), want one of %s" % (e.code(), e.details(), codes))
            if must_mention is not None:
                check(must_mention in (e.details() or ""),
                      "details %r do not mention %r" % (e.details(), must_mention))
            return
        raise CaseFailure("call succeeded, want %s" % (codes,))

    def stats_of(name):
        r = client.stub.ModelStatistics(pb.ModelStatisticsRequest(name=name), timeout=RPC_TIMEOUT_S)
        check(len(r.model_stats) == 1, "%d model_stats for %s" % (len(r.model_stats), name))
        return r.model_stats[0]

    def batch_count(stats, size):
        for b in stats.batch_stats:
            if b.batch_size == size:
                return b.compute_infer.count
        return 0

    def index_state(name):
        idx = client.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=RPC_TIMEOUT_S)
        for m in idx.models:
            if m.name == name:
                return m.state, m.reason, m.version
        raise CaseFailure("%s not in the repository index" % name)

    def load(name):
        client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name), timeout=60)

    def unload(name):
        client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name=name),
                                          timeout=60)

    # ------------------------------------------------------------ metadata

    def server_metadata_extensions():
        md = client.stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=RPC_TIMEOUT_S)
        for ext in EXTENSIONS:
            check(ext in md.extensions, "extension %r missing from %r" % (ext, list(md.extensions)))

    # ---------------------------------------------------------- statistics

    def statistics_count_exactly():
        before = stats_of("mlp")
        k3, k1 = 5, 2
        t0 = int(time.time() * 1000)
        for _ in range(k3):
            client.infer(mlp_request(x3))
        for _ in range(k1):
            client.infer(mlp_request(x1))
        bad = client.infer_request("mlp", "input", "FP32", [3, 15],
                                   raw=np.zeros((3, 15), dtype="<f4").tobytes())
        base.expect_error(client, bad, SC.INVALID_ARGUMENT)
        after = stats_of("mlp")
        check(after.name == "mlp" and after.version == "1", "name/version %s/%s"
              % (after.name, after.version))
        d = lambda f: f(after) - f(before)  # noqa: E731
        check(d(lambda s: s.inference_count) == 3 * k3 + k1,
              "inference_count grew by %d, want %d" % (d(lambda s: s.inference_count), 3 * k3 + k1))
        check(d(lambda s: s.execution_count) == k3 + k1,
              "execution_count grew by %d, want %d" % (d(lambda s: s.execution_count), k3 + k1))
        for field in ("success", "queue", "compute_input", "compute_infer", "compute_output"):
            got = d(lambda s: getattr(s.inference_stats, field).count)
            check(got == k3 + k1, "%s.count grew by %d, want %d" % (field, got, k3 + k1))
            check(getattr(after.inference_stats, field).ns > 0, "%s.ns is 0" % field)
        check(d(lambda s: s.inference_stats.fail.count) == 1,
              "fail.count grew by %d, want 1" % d(lambda s: s.inference_stats.fail.count))
        # Sequential requests find the model idle, so each runs at once (an idle
        # model does not wait max_queue_delay_us for others): queue time is only
        # the hand-off to a worker, which no exact bound describes.
        check(batch_count(after, 3) - batch_count(before, 3) == k3, "batch_stats[3] wrong")
        check(batch_count(after, 1) - batch_count(before, 1) == k1, "batch_stats[1] wrong")
        now = int(time.time() * 1000)
        check(t0 - 1000 <= after.last_inference <= now + 1000,
              "last_inference %d not within [%d, %d]" % (after.last_inference, t0, now))

    def statistics_count_engine_runs():
        # Concurrent requests may merge: execution_count counts engine runs,
        # batch_stats says how many rows each run merged, inference_count rows.
        before = stats_of("mlp")
        n = 24
        futures = [client.stub.ModelInfer.future(mlp_request(x1), timeout=30) for _ in range(n)]
        for f in futures:
            f.result()
        after = stats_of("mlp")
        d = lambda f: f(after) - f(before)  # noqa: E731
        runs = {b.batch_size: b.compute_infer.count for b in after.batch_stats}
        for b in before.batch_stats:
            runs[b.batch_size] -= b.compute_infer.count
        check(d(lambda s: s.inference_count) == n, "inference_count grew by %d, want %d"
              % (d(lambda s: s.inference_count), n))
        check(sum(runs.values()) == d(lambda s: s.execution_count),
              "batch_stats counted %d runs, execution_count grew by %d"
              % (sum(runs.values()), d(lambda s: s.execution_count)))
        check(sum(size * count for size, count in runs.items()) == n,
              "runs merged %d rows, want %d" % (sum(s * c for s, c in runs.items()), n))
        check(d(lambda s: s.inference_stats.queue.count) == n, "queue.count grew by %d, want %d"
              % (d(lambda s: s.inference_stats.queue.count), n))
        print("  note: %d concurrent requests ran in %d engine runs"
              % (n, d(lambda s: s.execution_count)))

    def statistics_all_and_unknown():
        r = client.stub.ModelStatistics(pb.ModelStatisticsRequest(), timeout=RPC_TIMEOUT_S)
        names = sorted(s.name for s in r.model_stats)
        check(names == ["cnn", "mlp"], "models %r, want ['cnn', 'mlp']" % names)
        expect_rpc_error(lambda: client.stub.ModelStatistics(
            pb.ModelStatisticsRequest(name="no_such_model"), timeout=RPC_TIMEOUT_S),
            (SC.NOT_FOUND,))

    # -------------------------------------------------------------- stream

    def stream_infer():
        reqs = []
        for i in range(6):
            reqs.append(mlp_request(x3 if i % 2 == 0 else x1, rid="req-%d" % i))
        bad = client.infer_request("mlp", "input", "FP32", [3, 15],
                                   raw=np.zeros((3, 15), dtype="<f4").tobytes())
        bad.id = "bad"
        reqs.insert(3, bad)
        unknown = client.infer_request("nope", "input", "FP32", [1, 16], raw=x1.tobytes())
        unknown.id = "unknown"
        reqs.append(unknown)
        responses = list(client.stub.ModelStreamInfer(iter(reqs), timeout=30))
        check(len(responses) == len(reqs), "%d responses for %d requests"
              % (len(responses), len(reqs)))
        by_id = {}
        for r in responses:
            rid = r.infer_response.id
            check(rid not in by_id, "id %r answered twice" % rid)
            by_id[rid] = r
        check(sorted(by_id) == sorted(q.id for q in reqs), "ids %r" % sorted(by_id))
        check(by_id["bad"].error_message != "", "bad request has no error_message")
        check("unknown" in by_id["unknown"].error_message or "nope" in
              by_id["unknown"].error_message, "unknown model message %r"
              % by_id["unknown"].error_message)
        for i in range(6):
            r = by_id["req-%d" % i]
            check(r.error_message == "", "req-%d failed: %s" % (i, r.error_message))
            x = x3 if i % 2 == 0 else x1
            base.expect_close(base.output_array(r.infer_response, "probabilities"),
                              base.mlp_forward(mlp_p, x))

    def stream_many_concurrent():
        n = 64
        reqs = [mlp_request(x1, rid=str(i)) for i in range(n)]
        ids = sorted(r.infer_response.id for r in client.stub.ModelStreamInfer(iter(reqs),
                                                                                timeout=60)
                     if r.error_message == "")
        check(ids == sorted(str(i) for i in range(n)), "%d of %d answered OK" % (len(ids), n))

    # ------------------------------------------------------- shared memory

    def shared_memory_io():
        x_bytes = x3.tobytes()
        want = base.mlp_forward(mlp_p, x3)
        out_size = want.size * 4
        shm_in = shared_memory.SharedMemory(create=True, size=4096)
        shm_out = shared_memory.SharedMemory(create=True, size=4096)
        try:
            shm_in.buf[64:64 + len(x_bytes)] = x_bytes
            client.stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
                name="in", key="/" + shm_in.name, offset=0, byte_size=4096),
                timeout=RPC_TIMEOUT_S)
            client.stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
                name="out", key="/" + shm_out.name, offset=128, byte_size=1024),
                timeout=RPC_TIMEOUT_S)
            st = client.stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(),
                                                      timeout=RPC_TIMEOUT_S)
            check(sorted(st.regions) == ["in", "out"], "regions %r" % sorted(st.regions))
            check(st.regions["out"].offset == 128 and st.regions["out"].byte_size == 1024,
                  "status of 'out': %s" % st.regions["out"])

            req = pb.ModelInferRequest(model_name="mlp", id="shm")
            t = req.inputs.add(name="input", datatype="FP32", shape=[3, 16])
            t.parameters["shared_memory_region"].string_param = "in"
            t.parameters["shared_memory_byte_size"].int64_param = len(x_bytes)
            t.parameters["shared_memory_offset"].int64_param = 64
            o = req.outputs.add(name="probabilities")
            o.parameters["shared_memory_region"].string_param = "out"
            o.parameters["shared_memory_byte_size"].int64_param = out_size
            o.parameters["shared_memory_offset"].int64_param = 16
            resp = client.infer(req)
            check(len(resp.raw_output_contents) in (0, 1) and
                  all(len(c) == 0 for c in resp.raw_output_contents),
                  "output data also came back in raw_output_contents")
            check(list(resp.outputs[0].shape) == [3, 4], "shape %r" % list(resp.outputs[0].shape))
            got = np.frombuffer(bytes(shm_out.buf[128 + 16:128 + 16 + out_size]),
                                dtype="<f4").reshape(3, 4)
            base.expect_close(got, want)

            # Reads past the region are refused.
            t.parameters["shared_memory_offset"].int64_param = 4000
            base.expect_error(client, req, SC.INVALID_ARGUMENT, must_mention="input")
            # Output larger than the space given.
            t.parameters["shared_memory_offset"].int64_param = 64
            o.parameters["shared_memory_byte_size"].int64_param = out_size - 4
            base.expect_error(client, req, SC.INVALID_ARGUMENT, must_mention="probabilities")

            expect_rpc_error(lambda: client.stub.SystemSharedMemoryRegister(
                pb.SystemSharedMemoryRegisterRequest(name="in", key="/" + shm_in.name,
                                                     byte_size=16), timeout=RPC_TIMEOUT_S),
                (SC.ALREADY_EXISTS,))
            expect_rpc_error(lambda: client.stub.SystemSharedMemoryRegister(
                pb.SystemSharedMemoryRegisterRequest(name="m", key="/onyx_no_such_shm_key",
                                                     byte_size=16), timeout=RPC_TIMEOUT_S),
                (SC.NOT_FOUND, SC.INVALID_ARGUMENT), must_mention="onyx_no_such_shm_key")
            client.stub.SystemSharedMemoryUnregister(
                pb.SystemSharedMemoryUnregisterRequest(name="in"), timeout=RPC_TIMEOUT_S)
            st = client.stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(),
                                                      timeout=RPC_TIMEOUT_S)
            check(sorted(st.regions) == ["out"], "after unregister: %r" % sorted(st.regions))
            client.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(),
                                                     timeout=RPC_TIMEOUT_S)
            st = client.stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(),
                                                      timeout=RPC_TIMEOUT_S)
            check(len(st.regions) == 0, "after unregister all: %r" % sorted(st.regions))
        finally:
            for s in (shm_in, shm_out):
                s.close()
                s.unlink()

    # ---------------------------------------------------------- repository

    def load_rejects_bad_names():
        expect_rpc_error(lambda: load("no_such_model"), (SC.NOT_FOUND,))
        for name in ("../mlp", "..", "mlp/1", "/etc"):
            expect_rpc_error(lambda: load(name), (SC.INVALID_ARGUMENT,),
                             must_mention="outside the repository")

    def unload_then_load_with_health_watch():
        watch = client.health.Watch(hpb.HealthCheckRequest(service="mlp"), timeout=60)
        server_watch = client.health.Watch(hpb.HealthCheckRequest(service=""), timeout=60)
        try:
            first = next(watch)
            check(first.status == hpb.HealthCheckResponse.SERVING, "first mlp status %s" % first)
            check(next(server_watch).status == hpb.HealthCheckResponse.SERVING,
                  "server not SERVING")
            unload("mlp")
            state, reason, _ = index_state("mlp")
            check(state == "UNAVAILABLE" and reason != "", "after unload: %s (%s)"
                  % (state, reason))
            base.expect_error(client, mlp_request(x1), SC.UNAVAILABLE)
            check(not client.stub.ModelReady(pb.ModelReadyRequest(name="mlp"),
                                             timeout=RPC_TIMEOUT_S).ready, "mlp still ready")
            check(next(watch).status == hpb.HealthCheckResponse.NOT_SERVING,
                  "watch did not report NOT_SERVING after unload")
            load("mlp")
            state, _, _ = index_state("mlp")
            check(state == "READY", "after load: %s" % state)
            base.expect_close(base.output_array(client.infer(mlp_request(x3)), "probabilities"),
                              base.mlp_forward(mlp_p, x3))
            check(next(watch).status == hpb.HealthCheckResponse.SERVING,
                  "watch did not report SERVING after load")
        finally:
            watch.cancel()
            server_watch.cancel()

    def reload_picks_up_new_version():
        shutil.copytree(os.path.join(repo_copy, "mlp", "1"), os.path.join(repo_copy, "mlp", "2"))
        load("mlp")
        md = client.stub.ModelMetadata(pb.ModelMetadataRequest(name="mlp"), timeout=RPC_TIMEOUT_S)
        check(list(md.versions) == ["2"], "versions %r, want ['2']" % list(md.versions))
        _, _, version = index_state("mlp")
        check(version == "2", "index version %r" % version)
        resp = client.infer(mlp_request(x3, version="2"))
        check(resp.model_version == "2", "model_version %r" % resp.model_version)
        base.expect_close(base.output_array(resp, "probabilities"), base.mlp_forward(mlp_p, x3))

    def reload_under_traffic_loses_nothing():
        stop = threading.Event()
        results = {"ok": 0, "failed": []}
        lock = threading.Lock()

        def worker():
            while not stop.is_set():
                try:
                    client.infer(mlp_request(x1))
                    with lock:
                        results["ok"] += 1
                except grpc.RpcError as e:
                    with lock:
                        results["failed"].append("%s %s" % (e.code(), e.details()))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            time.sleep(0.3)
            for _ in range(3):
                load("mlp")
                time.sleep(0.2)
        finally:
            stop.set()
            for t in threads:
                t.join()
        check(results["ok"] > 0, "no request succeeded")
        check(not results["failed"], "%d of %d requests failed during reloads, first: %s"
              % (len(results["failed"]), len(results["failed"]) + results["ok"],
                 results["failed"][0] if results["failed"] else ""))
        state, _, _ = index_state("mlp")
        check(state == "READY", "after reloads: %s" % state)
        print("  note: %d requests succeeded across 3 reloads" % results["ok"])

    def unload_drains_accepted_requests():
        # onyxd logs every call (--request-log-sample-rate 1) before replying:
        # version "" when no version took it (refused by the repository), else
        # the version that did. A call a version took must complete, unless
        # that version's scheduler refused it at the door ("is shutting down").
        # Unloading starts once the first reply is in, so calls are in flight.
        n = 64
        futures = [client.stub.ModelInfer.future(mlp_request(x3, rid="drain-%d" % i), timeout=30)
                   for i in range(n)]
        while not any(f.done() for f in futures):
            time.sleep(0.001)
        unload("mlp")
        outcomes = {}
        for i, f in enumerate(futures):
            try:
                f.result()
                outcomes[i] = ("OK", "")
            except grpc.RpcError as e:
                outcomes[i] = (e.code().name, e.details() or "")
        logged = {}
        with open(log_path[0], errors="replace") as log:
            for m in re.finditer(r'model="mlp" version="([^"]*)" id="drain-(\d+)" status=(\w+)', log.read()):
                logged.setdefault(int(m.group(2)), []).append((m.group(1), m.group(3)))
        served = door = 0
        for i in range(n):
            code, details = outcomes[i]
            lines = logged.get(i, [])
            check(len(lines) == 1, "drain-%d (%s %s): %d request log lines, want 1"
                  % (i, code, details, len(lines)))
            version, logged_code = lines[0]
            check(logged_code == code, "drain-%d: the client got %s, the log says %s" % (i, code, logged_code))
            if code == "OK":
                check(version != "", "drain-%d: served, yet logged without a version" % i)
                served += 1
            elif version == "" or "is shutting down" in details:
                check(code == "UNAVAILABLE", "drain-%d: refused with %s: %s" % (i, code, details))
                door += 1
            else:
                raise CaseFailure("drain-%d: version %s took it, then it ended with %s: %s"
                                  % (i, version, code, details))
        check(served > 0, "no request completed")
        print("  note: %d of %d requests completed, %d refused at the door" % (served, n, door))
        load("mlp")
        client.infer(mlp_request(x1))

    return [
        ("server_metadata_extensions", server_metadata_extensions),
        ("statistics_count_exactly", statistics_count_exactly),
        ("statistics_count_engine_runs", statistics_count_engine_runs),
        ("statistics_all_and_unknown", statistics_all_and_unknown),
        ("stream_infer_ids_and_errors", stream_infer),
        ("stream_infer_many", stream_many_concurrent),
        ("shared_memory_io", shared_memory_io),
        ("load_rejects_bad_names", load_rejects_bad_names),
        ("unload_then_load_with_health_watch", unload_then_load_with_health_watch),
        ("reload_picks_up_new_version", reload_picks_up_new_version),
        ("reload_under_traffic_loses_nothing", reload_under_traffic_loses_nothing),
        ("unload_drains_accepted_requests", unload_drains_accepted_requests),
    ]


repo_copy = None
log_path = [None]  # onyxd's stderr, where its request log goes


def prepare(args, tmp):
    global repo_copy
    repo_copy = os.path.join(tmp, "repo")
    shutil.copytree(args.repo, repo_copy)
    log_path[0] = os.path.join(tmp, "onyxd.stderr")
    return repo_copy, repo_copy


def main():
    return base.run_suite(__doc__, "onyx_rpc_", prepare, build_cases,
                          extra_args=("--request-log-sample-rate", "1"), log_level="info")


if __name__ == "__main__":
    sys.exit(main())
