#!/usr/bin/python3
"""Attack and fault matrix over onyxd: one scenario per row, each with its
exact expected status, and the ledger invariants checked after every row.

usage: matrix_test.py --onyxd BIN --proto-dir DIR --repo DIR [--rows REGEX]

Starts BIN (every ModelInfer logged: --request-log-sample-rate 1) on a
repository of its own: `canary` (y = 3 x) and REPO's `mlp`. Throughout the run
a canary thread sends 20 requests a second (every answer checked) and an
out-of-process probe calls ServerLive and grpc.health Check every 250 ms.
After every row:
  - every RPC of the row and of the canary got exactly one final status, the
    row's the one it expects, every OK answer equal to its reference;
  - onyxd is alive, the canary has had only correct OK answers;
  - queue depth and in-flight gauges are 0; onyxd's threads (gRPC's
    executor, timer and event engine pools, which start threads on demand
    and keep some, counted only past max(4, twice the CPU count) each), open file
    descriptors and the `mlp` and `canary` arenas' bytes in use are back to
    their values before the first row (threads and descriptors get 10 s to
    settle: gRPC closes idle connections lazily);
  - no file appeared in the sentinel directory outside the repository that
    the rows point symlinks and paths at;
and at the end: ServerLive and Check answered within 100 ms throughout (less
any time the machine itself stood still: liveness.StallWatch), every
line onyxd logged is one record (a client's newline did not split it), and no
metric series carries a name a client made up.
Rows: transport (onyxd started with transport_rows.TRANSPORT's limits: the
SETTINGS it advertises, a stream past the concurrent-stream cap, a ping
flood answered with GOAWAY too_many_pings, 20,000 streams reset as soon as
opened, metadata past its limit, a message exactly at and one byte over
max_message_bytes, a gzip message inflating past it, random bytes and HTTP/1.1
on the port, a silent connection closed at the handshake timeout, an idle one
and one holding half a HEADERS frame closed at the idle limit), repository (load names with NUL, `..`, percent-encoding, 4 KiB;
symlinked model and version directories leading out of the root; external
data paths that are absolute, `../`, symlinks or past the end of their file),
models (every cut of a truncated file, bytes that are not protobuf, a cycle,
a missing input, opsets 0 and 999, If nested 25 and 80 deep, Loop nested 80
deep, a million nodes, an
initializer whose dims overstate its data), configuration (YAML nested
10,000 deep, an alias bomb, duplicate keys, integer overflow), requests (10,000
parameters, request ids with newlines, typed and raw contents both set, a shape
product overflowing int64, zero and negative dims, a BYTES length prefix past
its buffer, duplicate and unknown inputs and outputs),
shared memory (offset plus size wrapping int64, a region truncated by the
client after registering, unregistering a region while it is in use), model
lifecycle (lifecycle_rows.py: load and unload racing from 32 threads while
clients infer on the churned models, a model reloaded 10 times under load
with every inference answered OK).
Prints "PASS row" / "FAIL row: reason" and "N passed, M failed"; exits
non-zero on any failure.
"""
import collections
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from multiprocessing import shared_memory

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, HERE)
import python_client_test as base  # noqa: E402
from ledger import Ledger, gauge_sum, sample_process, scrape, threads_beyond_pools  # noqa: E402
from liveness import LivenessProbe, StallWatch  # noqa: E402
from lifecycle_rows import lifecycle_rows  # noqa: E402
from overload_rows import overload_rows  # noqa: E402
from transport_rows import TRANSPORT, transport_rows  # noqa: E402

CaseFailure, check = base.CaseFailure, base.check
LOAD_DEADLINE_S = 60.0
PROBE_BOUND_MS = 100.0
SETTLE_S = 10.0
MAX_MESSAGE_BYTES = 64 << 20  # onyxd's default, left as is: the million-node model needs it


# ------------------------------------------------------------------ models

def model_bytes(nodes, inputs, outputs, initializers=(), opset=13, ir=8):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    return model.SerializeToString()


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def canary_bytes():
    return model_bytes([helper.make_node("Mul", ["x", "k"], ["y"])], [f32("x", ["batch", 4])], [f32("y", ["batch", 4])],
                       [numpy_helper.from_array(np.array([3.0], np.float32), "k")])


def strings_bytes():
    """Identity over a 1-D BYTES tensor."""
    s = helper.make_tensor_value_info
    return model_bytes([helper.make_node("Identity", ["s"], ["t"])], [s("s", TensorProto.STRING, [None])],
                       [s("t", TensorProto.STRING, [None])])


def nested_if_bytes(depth):
    """`depth` If nodes, each the only node of its parent's then-branch."""
    def branch(level):
        if level == depth:
            return helper.make_graph([helper.make_node("Identity", ["x"], ["out%d" % level])], "leaf%d" % level, [],
                                     [f32("out%d" % level, [4])])
        inner = helper.make_node("If", ["c"], ["out%d" % level], then_branch=branch(level + 1),
                                 else_branch=helper.make_graph([helper.make_node("Identity", ["x"], ["e%d" % level])],
                                                               "else%d" % level, [], [f32("e%d" % level, [4])]))
        return helper.make_graph([inner], "then%d" % level, [], [f32("out%d" % level, [4])])
    top = helper.make_node("If", ["c"], ["y"], then_branch=branch(1),
                           else_branch=helper.make_graph([helper.make_node("Identity", ["x"], ["e0"])], "else0", [],
                                                         [f32("e0", [4])]))
    return model_bytes([top], [helper.make_tensor_value_info("c", TensorProto.BOOL, []), f32("x", [4])],
                       [f32("y", [4])])


def nested_loop_bytes(depth):
    """`depth` Loop nodes, each the body's node of its parent's Loop (trip
    count `m` from the main graph, one carried value)."""
    def body(level):
        nodes = [helper.make_node("Identity", ["c%d" % level], ["co%d" % level])]
        if level == depth:
            nodes.append(helper.make_node("Identity", ["v%d" % level], ["vo%d" % level]))
        else:
            nodes.append(helper.make_node("Loop", ["m", "", "v%d" % level], ["vo%d" % level], body=body(level + 1)))
        return helper.make_graph(nodes, "body%d" % level,
                                 [helper.make_tensor_value_info("i%d" % level, TensorProto.INT64, []),
                                  helper.make_tensor_value_info("c%d" % level, TensorProto.BOOL, []),
                                  f32("v%d" % level, [4])],
                                 [helper.make_tensor_value_info("co%d" % level, TensorProto.BOOL, []),
                                  f32("vo%d" % level, [4])])
    top = helper.make_node("Loop", ["m", "", "x"], ["y"], body=body(1))
    return model_bytes([top], [helper.make_tensor_value_info("m", TensorProto.INT64, []), f32("x", [4])],
                       [f32("y", [4])])


def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def many_nodes_bytes(count):
    """A model of `count` identical Relu nodes, written as protobuf bytes
    directly (repeated fields concatenate) so that building it takes no time."""
    graph = helper.make_graph([], "g", [f32("x", [1])], [f32("y", [1])])
    node = helper.make_node("Relu", ["x"], ["y"]).SerializeToString()
    graph_bytes = graph.SerializeToString() + (b"\x0a" + varint(len(node)) + node) * count
    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    model.ClearField("graph")
    return model.SerializeToString() + b"\x3a" + varint(len(graph_bytes)) + graph_bytes  # field 7: graph


def cycle_bytes():
    return model_bytes([helper.make_node("Relu", ["b"], ["a"], name="first"),
                        helper.make_node("Relu", ["a"], ["b"], name="second"),
                        helper.make_node("Add", ["x", "a"], ["y"], name="out")], [f32("x", [4])], [f32("y", [4])])


def missing_input_bytes():
    return model_bytes([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")], [f32("x", [4])],
                       [f32("y", [4])])


def overstated_initializer_bytes():
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 12], raw_data=b"\0" * 16)
    return model_bytes([helper.make_node("Add", ["x", "w"], ["y"])], [f32("x", [4])], [f32("y", [4])], [w])


def external_data_bytes(location, offset=0, length=16):
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return model_bytes([helper.make_node("Add", ["x", "w"], ["y"])], [f32("x", [4])], [f32("y", [4])], [w])


# ------------------------------------------------------------------ harness

class Matrix:
    def __init__(self, client, proc, metrics_address, repo, sentinel, stub_dir, address, stderr_path):
        self.client, self.proc, self.metrics_address = client, proc, metrics_address
        self.repo, self.sentinel, self.stderr_path = repo, sentinel, stderr_path
        self.address = address
        self.SC = client.grpc.StatusCode
        self.ledger = Ledger()
        self.canary_stop = threading.Event()
        self.canary_thread = threading.Thread(target=self._canary, daemon=True)
        self.probe = LivenessProbe(stub_dir, address)
        self.stall_watch = StallWatch()
        self.baseline = None
        self.client_names = set()
        self.planted = set()
        self.spans = []  # (row name, start, end) on time.monotonic()

    # -- background traffic
    def _canary(self):
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        while not self.canary_stop.is_set():
            rid = self.ledger.sent("canary", 3.0 * x)
            req = self.client.infer_request("canary", "x", "FP32", [2, 4], raw=x.tobytes(), outputs=["y"])
            try:
                y = base.output_array(self.client.stub.ModelInfer(req, timeout=10), "y")
                self.ledger.finished(rid, "OK", y)
            except self.client.grpc.RpcError as e:
                self.ledger.finished(rid, e.code().name, detail=e.details())
            self.canary_stop.wait(0.05)

    # -- measurements
    def state(self):
        metrics = scrape(self.metrics_address)
        arena = {m: gauge_sum(metrics, "onyx_arena_in_use_bytes", m) for m in ("mlp", "canary")}
        s = sample_process(self.proc.pid, time.monotonic())
        return {"threads": threads_beyond_pools(self.proc.pid), "fds": s.fds, "arena": arena,
                "queue": gauge_sum(metrics, "onyx_queue_depth"), "inflight": gauge_sum(metrics, "onyx_inflight_requests"),
                "series": len(metrics), "metrics": metrics}

    def sentinel_files(self):
        """Files under the sentinel directory that a row did not put there."""
        found = set()
        for root, dirs, files in os.walk(self.sentinel):
            for name in dirs + files:
                found.add(os.path.relpath(os.path.join(root, name), self.sentinel))
        return sorted(found - self.planted)

    def plant(self, relative, data):
        """Writes a file outside the repository for a row to point at."""
        path = os.path.join(self.sentinel, relative)
        write(path, data)
        parts = relative.split("/")
        self.planted.update("/".join(parts[:i + 1]) for i in range(len(parts)))
        return path

    def start(self):
        self.canary_thread.start()
        time.sleep(1.0)
        self.baseline = self.state()
        self.baseline_sentinel = self.sentinel_files()

    def invariants(self):
        """Problems after a row (empty when all hold)."""
        problems = []
        if self.proc.poll() is not None:
            return ["onyxd exited (status %s)" % self.proc.returncode]
        problems += self.ledger.violations(allowed=("OK",), include_pending=False)  # the canary runs on
        deadline = time.monotonic() + SETTLE_S
        while True:
            now = self.state()
            diffs = []
            if now["queue"] or now["inflight"]:
                diffs.append("queue depth %g, in flight %g" % (now["queue"], now["inflight"]))
            for key in ("threads", "fds"):
                if now[key] > self.baseline[key]:
                    diffs.append("%s %d, baseline %d" % (key, now[key], self.baseline[key]))
            for model, used in now["arena"].items():
                if used > self.baseline["arena"][model]:
                    diffs.append("%s arena in use %d bytes, baseline %d" % (model, used, self.baseline["arena"][model]))
            if not diffs or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        problems += diffs
        if self.sentinel_files() != self.baseline_sentinel:
            problems.append("files appeared outside the repository: %s" % (
                sorted(set(self.sentinel_files()) - set(self.baseline_sentinel))))
        return problems

    def finish(self):
        self.canary_stop.set()
        self.canary_thread.join(timeout=15)
        probe = self.probe.stop()
        stalls = self.stall_watch.stop()
        problems = list(self.ledger.violations(allowed=("OK",)))
        lat = probe["latencies_ms"]
        if probe["failures"]:
            problems.append("liveness probe failures: %s" % probe["failures"][:5])
        # A probe is onyxd's to answer for except while the machine stood still.
        own = [ms - 1e3 * self.stall_watch.overlap(t, t + ms / 1e3, stalls)
               for t, ms in zip(probe["started"], lat)]
        if not lat or max(own) > PROBE_BOUND_MS:
            problems.append("slowest ServerLive/Check %.1f ms (bound %.0f ms, %d probes)%s" % (
                max(own) if lat else float("nan"), PROBE_BOUND_MS, len(lat),
                self.slow_probes(own, lat, probe["started"])))
        excused = sum(1 for ms, mine in zip(lat, own) if ms > PROBE_BOUND_MS >= mine)
        self.machine = "machine stalls %d, longest %.0f ms%s" % (
            len(stalls), max((b - a for a, b in stalls), default=0.0) * 1e3,
            ", %d probes slower than %.0f ms only by them" % (excused, PROBE_BOUND_MS) if excused else "")
        metrics = self.state()["metrics"]
        leaked = sorted({n for name in self.client_names for (n, labels) in metrics if name in labels})
        if leaked:
            problems.append("metric series carry client-made names: %s" % leaked[:5])
        with open(self.stderr_path, errors="replace") as f:
            lines = f.read().splitlines()
        bad = [line for line in lines if line and not line.startswith("[")]
        if bad:
            problems.append("%d log lines are not records (a split record?), first %r" % (len(bad), bad[0][:120]))
        counts = collections.Counter(code for (m, code), n in self.ledger.counts().items() if m == "canary"
                                     for _ in range(n))
        return problems, len(lat), (max(lat) if lat else 0.0), counts

    def slow_probes(self, own, latencies, started):
        """Where the probes over the bound (in `own` time, machine stalls
        taken off) fell: each with the rows its whole span overlapped."""
        slow = [(t, ms, raw) for t, ms, raw in zip(started, own, latencies) if ms > PROBE_BOUND_MS]
        parts = []
        for t, ms, raw in slow[:10]:
            rows = [name for name, a, b in self.spans if a <= t + raw / 1e3 and t <= b]
            parts.append("%.0f ms during %s" % (ms, ", ".join(rows) if rows else "the invariant checks"))
        return (": " + "; ".join(parts)) if parts else ""

    # -- row helpers
    def expect_status(self, call, code, mention=None):
        """Runs call(); it must fail with `code` (and mention `mention`)."""
        rid = self.ledger.sent("row")
        try:
            call()
        except self.client.grpc.RpcError as e:
            self.ledger.finished(rid, "OK")  # the expected failure is this row's success
            check(e.code() == code, "status %s (%s), want %s" % (e.code(), (e.details() or "")[:300], code))
            if mention is not None:
                check(mention in (e.details() or ""), "details %r do not mention %r" % ((e.details() or "")[:300],
                                                                                       mention))
            return e.details() or ""
        self.ledger.finished(rid, "OK")
        raise CaseFailure("call succeeded, want %s" % code)

    def load(self, name, files=None, config=None, timeout=LOAD_DEADLINE_S):
        req = self.client.pb.RepositoryModelLoadRequest(model_name=name)
        for path, data in (files or {}).items():
            req.parameters["file:" + path].bytes_param = data
        if config is not None:
            req.parameters["config"].string_param = config
        return self.client.stub.RepositoryModelLoad(req, timeout=timeout)

    def expect_load_refused(self, name, code, mention=None, files=None, config=None):
        t0 = time.monotonic()
        # A name with a directory in the repository is the operator's; only
        # names a client made up must never reach a metric label.
        if "\x00" in name or not os.path.isdir(os.path.join(self.repo, name)):
            self.client_names.add(name)
        details = self.expect_status(lambda: self.load(name, files, config), code, mention)
        elapsed = time.monotonic() - t0
        check(elapsed < LOAD_DEADLINE_S, "refusal took %.1f s" % elapsed)
        return details


def build_rows(m, tmp):
    SC = m.SC
    pb = m.client.pb
    canary = canary_bytes()
    outside = m.sentinel

    def link(path, target):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)

    # ---- repository
    def load_name_nul():
        m.expect_load_refused("ca\x00nary", SC.INVALID_ARGUMENT)

    def load_name_dotdot():
        m.expect_load_refused("../canary", SC.INVALID_ARGUMENT, "outside the repository")

    def load_name_percent():
        m.expect_load_refused("%2e%2e%2fcanary", SC.NOT_FOUND)

    def load_name_4k():
        m.expect_load_refused("m" * 4096, SC.INVALID_ARGUMENT)

    def symlinked_model_dir():
        m.plant("evil_model/1/model.onnx", canary)
        link(os.path.join(m.repo, "evil"), os.path.join(outside, "evil_model"))
        m.expect_load_refused("evil", SC.INVALID_ARGUMENT, "outside the repository")

    def symlinked_version_dir():
        m.plant("evil_version/model.onnx", canary)
        link(os.path.join(m.repo, "evil_v", "1"), os.path.join(outside, "evil_version"))
        # A version that fails to load answers with its own code (UNAVAILABLE).
        m.expect_load_refused("evil_v", SC.UNAVAILABLE, "outside the repository root")

    def external_data(name, location, mention, offset=0, length=16, extra=None):
        def row():
            model_dir = os.path.join(m.repo, name, "1")
            write(os.path.join(model_dir, "model.onnx"), external_data_bytes(location, offset, length))
            for path, data in (extra or {}).items():
                write(os.path.join(model_dir, path), data)
            m.expect_load_refused(name, SC.INVALID_ARGUMENT, mention)
        return row

    def external_symlink():
        m.plant("weights.bin", b"\0" * 16)
        link(os.path.join(m.repo, "ext_link", "1", "weights.bin"), os.path.join(outside, "weights.bin"))
        write(os.path.join(m.repo, "ext_link", "1", "model.onnx"), external_data_bytes("weights.bin"))
        m.expect_load_refused("ext_link", SC.INVALID_ARGUMENT, "'weights.bin' is a symbolic link")

    def external_hardlink():
        m.plant("hard.bin", b"\0" * 16)
        os.makedirs(os.path.join(m.repo, "ext_hard", "1"), exist_ok=True)
        try:
            os.link(os.path.join(outside, "hard.bin"), os.path.join(m.repo, "ext_hard", "1", "hard.bin"))
        except OSError as e:  # the sentinel on another file system: nothing to test
            raise CaseFailure("cannot make a hard link: %s" % e)
        write(os.path.join(m.repo, "ext_hard", "1", "model.onnx"), external_data_bytes("hard.bin"))
        m.expect_load_refused("ext_hard", SC.INVALID_ARGUMENT, "'hard.bin' has 2 hard links")

    # ---- models (loaded from RepositoryModelLoad files)
    def model_row(data, code, mention=None):
        return lambda: m.expect_load_refused("bad_model", code, mention, files={"1/model.onnx": data})

    def every_cut():
        refused = 0
        for cut in range(len(canary)):
            rid = m.ledger.sent("row")
            try:
                m.load("cut_model", files={"1/model.onnx": canary[:cut]})
                m.ledger.finished(rid, "OK")
                # A prefix can still be a valid, smaller model; it must then serve.
                m.client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="cut_model"), timeout=30)
            except m.client.grpc.RpcError as e:
                m.ledger.finished(rid, "OK")
                check(e.code() in (SC.INVALID_ARGUMENT, SC.UNIMPLEMENTED),
                      "cut at %d: %s %s" % (cut, e.code(), (e.details() or "")[:200]))
                refused += 1
        check(refused > len(canary) // 2, "only %d of %d cuts refused" % (refused, len(canary)))

    # ---- configuration (RepositoryModelLoad's config parameter)
    def config_row(text, mention):
        return lambda: m.expect_load_refused("canary", SC.INVALID_ARGUMENT, mention, config=text)

    nested_yaml = "max_batch_size: " + "[" * 10000 + "]" * 10000 + "\n"
    alias_bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        "%s: &%s [%s]\n" % (chr(98 + i), chr(98 + i), ", ".join(["*" + chr(97 + i)] * 10)) for i in range(9)) + \
        "max_batch_size: *j\n"

    # ---- requests
    x = np.arange(48, dtype=np.float32).reshape(3, 16)

    def mlp_request():
        return m.client.infer_request("mlp", "input", "FP32", [3, 16], raw=x.tobytes())

    def many_parameters():
        # Parameters onyxd does not know are ignored, as KServe lets servers
        # do; 10 k of them (bounded by max_message_bytes) cost nothing else.
        req = mlp_request()
        for i in range(10000):
            req.parameters["p%d" % i].string_param = "v"
        rid = m.ledger.sent("row")
        resp = m.client.infer(req)
        m.ledger.finished(rid, "OK")
        check(list(base.output_array(resp, resp.outputs[0].name).shape)[0] == 3, "wrong answer shape")

    def request_id_newline():
        req = mlp_request()
        req.id = "evil\nINJECTED [fake] record\r\n" + "z" * 5000
        m.client_names.add("INJECTED")
        rid = m.ledger.sent("row")
        resp = m.client.infer(req)
        m.ledger.finished(rid, "OK")
        check(resp.id == req.id, "the reply's id differs from the request's")

    def bad_request(shape=(3, 16), raw=None, inputs=None, outputs=(), model="mlp", datatype="FP32"):
        """A request the server must refuse; inputs: [(name, shape)] overrides."""
        req = pb.ModelInferRequest(model_name=model)
        for name, dims in inputs or [("input", shape)]:
            req.inputs.add(name=name, datatype=datatype, shape=list(dims))
            req.raw_input_contents.append(x.tobytes() if raw is None else raw)
        for name in outputs:
            req.outputs.add(name=name)
        return req

    def request_row(mention, **kw):
        return lambda: m.expect_status(lambda: m.client.infer(bad_request(**kw)), SC.INVALID_ARGUMENT, mention)

    def bytes_prefix_past_buffer():
        # The first element declares 100 bytes and 3 follow.
        raw = (100).to_bytes(4, "little") + b"abc"
        m.expect_status(lambda: m.client.infer(bad_request(model="strings", inputs=[("s", [1])], raw=raw,
                                                           datatype="BYTES")),
                        SC.INVALID_ARGUMENT, "declares 100")
        # A well-formed one is served and echoed.
        ok = (3).to_bytes(4, "little") + b"abc"
        rid = m.ledger.sent("row")
        resp = m.client.infer(bad_request(model="strings", inputs=[("s", [1])], raw=ok, datatype="BYTES"))
        m.ledger.finished(rid, "OK")
        check(resp.raw_output_contents[0] == ok, "echo %r, want %r" % (resp.raw_output_contents[0][:20], ok))

    def typed_and_raw():
        req = mlp_request()
        req.inputs[0].contents.fp32_contents.extend(x.ravel().tolist())
        m.expect_status(lambda: m.client.infer(req), SC.INVALID_ARGUMENT)

    # ---- shared memory
    shm_state = {}

    def register(name, size):
        shm = shared_memory.SharedMemory(create=True, size=size)
        shm_state[name] = shm
        m.client.stub.SystemSharedMemoryRegister(
            pb.SystemSharedMemoryRegisterRequest(name=name, key="/" + shm.name, offset=0, byte_size=size), timeout=10)
        return shm

    def unregister(name):
        m.client.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name=name), timeout=10)
        shm = shm_state.pop(name)
        shm.close()
        shm.unlink()

    def shm_request(region, offset, size):
        req = pb.ModelInferRequest(model_name="mlp")
        t = req.inputs.add(name="input", datatype="FP32", shape=[3, 16])
        t.parameters["shared_memory_region"].string_param = region
        t.parameters["shared_memory_byte_size"].int64_param = size
        t.parameters["shared_memory_offset"].int64_param = offset
        return req

    def shm_wrapping():
        register("wrap", 4096)
        try:
            m.expect_status(lambda: m.client.infer(shm_request("wrap", (1 << 63) - 8, 192)), SC.INVALID_ARGUMENT)
            m.expect_status(lambda: m.client.infer(shm_request("wrap", 64, (1 << 63) - 1)), SC.INVALID_ARGUMENT)
        finally:
            unregister("wrap")

    def shm_truncated():
        shm = register("trunc", 1 << 16)
        try:
            os.truncate("/dev/shm/" + shm.name, 0)
            m.expect_status(lambda: m.client.infer(shm_request("trunc", 0, 192)), SC.INVALID_ARGUMENT)
        finally:
            unregister("trunc")

    def shm_unregister_in_use():
        shm = register("busy", 4096)
        shm.buf[:192] = x.tobytes()
        results = []
        stop = threading.Event()

        def infer_loop():
            while not stop.is_set():
                rid = m.ledger.sent("row")
                try:
                    m.client.infer(shm_request("busy", 0, 192))
                    m.ledger.finished(rid, "OK")
                    results.append("OK")
                except m.client.grpc.RpcError as e:
                    # Once unregistered the region is unknown: NOT_FOUND naming it.
                    m.ledger.finished(rid, "OK" if e.code() == SC.NOT_FOUND else e.code().name)
                    results.append(e.code().name)
        t = threading.Thread(target=infer_loop)
        t.start()
        time.sleep(0.3)
        unregister("busy")
        time.sleep(0.3)
        stop.set()
        t.join()
        check("OK" in results and results[-1] == "NOT_FOUND", "results %s" % collections.Counter(results))

    return transport_rows(m, MAX_MESSAGE_BYTES) + [
        ("repository_load_name_with_nul", load_name_nul),
        ("repository_load_name_dotdot", load_name_dotdot),
        ("repository_load_name_percent_encoded", load_name_percent),
        ("repository_load_name_4kib", load_name_4k),
        ("repository_symlinked_model_dir_out_of_root", symlinked_model_dir),
        ("repository_symlinked_version_dir_out_of_root", symlinked_version_dir),
        ("external_data_absolute_path", external_data("ext_abs", os.path.join(outside, "weights.bin"),
                                                      "must be a relative path inside the model directory")),
        ("external_data_dotdot", external_data("ext_dotdot", "../../../" + os.path.basename(outside) + "/w.bin",
                                               "must be a relative path inside the model directory")),
        ("external_data_symlink_out_of_root", external_symlink),
        ("external_data_hard_link", external_hardlink),
        ("external_data_past_end_of_file", external_data("ext_short", "w.bin", "past the end of file", offset=8,
                                                         length=16,
                                                         extra={"w.bin": b"\0" * 16})),
        ("model_every_cut_of_a_truncated_file", every_cut),
        ("model_not_protobuf", model_row(os.urandom(4096), SC.INVALID_ARGUMENT)),
        ("model_cycle", model_row(cycle_bytes(), SC.INVALID_ARGUMENT, "cycle")),
        ("model_missing_input", model_row(missing_input_bytes(), SC.INVALID_ARGUMENT, "nowhere")),
        ("model_opset_0", model_row(model_bytes([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [4])],
                                                [f32("y", [4])], opset=0), SC.INVALID_ARGUMENT)),
        ("model_opset_999", model_row(model_bytes([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [4])],
                                                  [f32("y", [4])], opset=999), SC.UNIMPLEMENTED, "999")),
        ("model_if_nested_80_deep", model_row(nested_if_bytes(80), SC.INVALID_ARGUMENT, "nested")),
        ("model_if_nested_25_deep", model_row(nested_if_bytes(25), SC.INVALID_ARGUMENT, "nests subgraphs 25 deep")),
        ("model_loop_nested_80_deep", model_row(nested_loop_bytes(80), SC.INVALID_ARGUMENT, "nested")),
        ("model_a_million_nodes", model_row(many_nodes_bytes(1000000), SC.INVALID_ARGUMENT, "more than 500000 nodes")),
        ("model_initializer_overstates_its_size", model_row(overstated_initializer_bytes(), SC.INVALID_ARGUMENT,
                                                            "'w'")),
        ("config_yaml_nested_10k_deep", config_row(nested_yaml, "nested more than 64 deep")),
        ("config_yaml_alias_bomb", config_row(alias_bomb, "aliases (*name) are not accepted")),
        ("config_yaml_duplicate_keys", config_row("max_batch_size: 4\nmax_batch_size: 8\n", "duplicate key")),
        ("config_integer_overflow", config_row("max_batch_size: 99999999999999999999999\n", "max_batch_size")),
        ("request_10k_parameters", many_parameters),
        ("request_id_with_newlines", request_id_newline),
        ("request_typed_and_raw_contents", typed_and_raw),
        ("request_shape_product_overflows_int64", request_row("overflows int64", shape=(3, 1 << 62, 16))),
        ("request_zero_dim", request_row("batch size", shape=(0, 16), raw=b"")),
        ("request_negative_dim", request_row("negative dimension", shape=(-3, 16))),
        ("request_bytes_prefix_past_the_buffer", bytes_prefix_past_buffer),
        ("request_duplicate_input", request_row("given twice", inputs=[("input", (3, 16))] * 2)),
        ("request_unknown_input", request_row("unknown input 'nope'", inputs=[("input", (3, 16)), ("nope", (3, 16))])),
        ("request_unknown_output", request_row("unknown output 'nope'", outputs=["nope"])),
        ("request_duplicate_output", request_row("requested twice", outputs=["probabilities", "probabilities"])),
        ("shared_memory_offset_plus_size_wraps", shm_wrapping),
        ("shared_memory_region_truncated_after_register", shm_truncated),
        ("shared_memory_unregister_while_in_use", shm_unregister_in_use),
    ] + lifecycle_rows(m, canary) + overload_rows(m, os.path.join(m.repo, "mlp"))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def main():
    args = base.parse_args(__doc__, lambda ap: ap.add_argument(
        "--rows", default="", help="run only the rows whose names match this regular expression"))
    tmp = tempfile.mkdtemp(prefix="onyx_matrix_")
    sentinel = tempfile.mkdtemp(prefix="onyx_matrix_outside_")
    proc = None
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    outcomes = []
    try:
        mods = base.stubs_in(args.proto_dir, tmp)
        if mods is None:
            return 1
        repo = os.path.join(tmp, "repo")
        shutil.copytree(os.path.join(args.repo, "mlp"), os.path.join(repo, "mlp"))
        write(os.path.join(repo, "canary", "1", "model.onnx"), canary_bytes())
        write(os.path.join(repo, "strings", "1", "model.onnx"), strings_bytes())
        config = os.path.join(tmp, "onyxd.yaml")
        write(config, "transport:\n" + "".join("  %s: %d\n" % kv for kv in TRANSPORT.items()))
        proc, address, metrics_address, failure = base.launch_onyxd(
            args.onyxd, repo, mods, tmp, log_level="info",
            extra_args=["--request-log-sample-rate", "1", "--config", config,
                        "--max-message-bytes", str(MAX_MESSAGE_BYTES)])
        if failure is not None:
            return 1
        client = base.Client(mods, address)
        matrix = Matrix(client, proc, metrics_address, repo, sentinel, os.path.join(tmp, "stubs"), address,
                        stderr_path)
        matrix.start()
        for name, row in build_rows(matrix, tmp):
            if not re.search(args.rows, name):
                continue
            began = time.monotonic()
            failure = base.case_failure(row)
            matrix.spans.append((name, began, time.monotonic()))
            problems = matrix.invariants()
            if failure is None and problems:
                failure = "invariants: " + "; ".join(problems)
            outcomes.append((name, failure))
            print("PASS %s" % name if failure is None else "FAIL %s: %s" % (name, failure))
            sys.stdout.flush()
            if proc.poll() is not None:
                break
        problems, probes, worst, canary = matrix.finish()
        outcomes.append(("invariants_over_the_whole_run", "; ".join(problems) if problems else None))
        print("%s invariants_over_the_whole_run: %d probes, slowest %.1f ms; %s; canary %s%s" % (
            "PASS" if not problems else "FAIL", probes, worst, matrix.machine, dict(canary),
            "" if not problems else ": " + "; ".join(problems)))
        client.channel.close()
    finally:
        if proc is not None and base.stop_checked(proc, stderr_path):
            outcomes.append(("onyxd_exit_status", "onyxd did not exit 0"))
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(sentinel, ignore_errors=True)
    passed = sum(1 for _, f in outcomes if f is None)
    print("%d passed, %d failed" % (passed, len(outcomes) - passed))
    return 0 if passed == len(outcomes) and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
