#!/usr/bin/python3
"""Faults the attack and fault matrix cannot hold onyxd through: it is killed,
or its files change under it. Every RPC goes through the ledger.

usage: crash_test.py --onyxd BIN --proto-dir DIR --repo DIR

Cases:
  - kill -9 under load, then restart: two clients infer on `mlp` (REPO's)
    while a model loaded through RepositoryModelLoad's `file:` parameters
    holds its private directory in onyxd's temp dir (TMPDIR, the test's own);
    onyxd is killed with SIGKILL. Every RPC in flight ends within its timeout
    with OK (the right answer) or UNAVAILABLE, none is left without a status.
    The directory is still there; onyxd restarted on the same ports removes
    it (and says so in its log), is ready — the time from exec to ServerReady
    is printed — and serves the clients again.
  - a model file truncated while it loads: `big` (64 MiB of weights) is
    loaded 12 times while another thread rewrites and truncates its file at
    random cuts; each load ends OK or refused naming the model, never anything
    else, onyxd stays up and serves `mlp`, and after a last load of the whole
    file `big` answers with numpy's result.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed".
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, HERE)
import python_client_test as base  # noqa: E402
from ledger import Ledger  # noqa: E402

check = base.check
BIG_ROWS = 4096          # `big`: y = x @ W with W [4096, 4096] float32 (64 MiB)
TRUNCATED_LOADS = 12


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def small_model():
    """y = 2 x, x [2, 3]: loaded through `file:` parameters."""
    g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "twice",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def big_model(w):
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, BIG_ROWS])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, BIG_ROWS])],
                          [numpy_helper.from_array(w, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


class Server:
    """onyxd on fixed ports, restartable; its temp dir is `tmpdir`."""

    def __init__(self, args, mods, repo, tmp):
        self.args, self.mods, self.repo, self.tmp = args, mods, repo, tmp
        grpc_port, metrics_port = base.free_ports(2)
        self.address = "127.0.0.1:%d" % grpc_port
        self.metrics_address = "127.0.0.1:%d" % metrics_port
        self.tmpdir = os.path.join(tmp, "onyxd-tmp")
        os.makedirs(self.tmpdir, exist_ok=True)
        self.proc = None
        self.starts = 0

    def start(self):
        """Starts onyxd; returns the seconds from exec to ServerReady."""
        self.starts += 1
        self.stderr_path = os.path.join(self.tmp, "onyxd.%d.stderr" % self.starts)
        env = dict(os.environ, TMPDIR=self.tmpdir)
        cmd = [self.args.onyxd, "--model-repository", self.repo, "--grpc-address", self.address,
               "--metrics-address", self.metrics_address, "--log-level", "info"]
        t0 = time.monotonic()
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        failure = base.wait_ready(self.mods, self.address, self.proc)
        if failure is not None:
            raise base.CaseFailure("onyxd start %d: %s\n%s" % (self.starts, failure, base.tail(self.stderr_path)))
        return time.monotonic() - t0

    def log(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()


def build_cases(server, client, mlp_params):
    SC = client.grpc.StatusCode
    pb = client.pb
    xs = [np.random.default_rng(i).standard_normal((1, 16)).astype(np.float32) for i in range(8)]
    wants = [base.mlp_forward(mlp_params, x) for x in xs]

    def load_dirs():
        return sorted(d for d in os.listdir(server.tmpdir) if d.startswith("onyx-load-"))

    def kill_9_under_load_then_restart():
        ledger = Ledger()
        req = pb.RepositoryModelLoadRequest(model_name="twice")
        req.parameters["file:1/model.onnx"].bytes_param = small_model()
        client.stub.RepositoryModelLoad(req, timeout=60)
        check(len(load_dirs()) == 1, "the load's private directories: %s" % load_dirs())
        stop = threading.Event()

        def infer_loop(seed):
            i = seed
            while not stop.is_set():
                k = i % len(xs)
                i += 1
                rid = ledger.sent("mlp", wants[k])
                try:
                    resp = client.stub.ModelInfer(client.infer_request("mlp", "input", "FP32", [1, 16],
                                                                       raw=xs[k].tobytes()), timeout=10)
                    ledger.finished(rid, "OK", base.output_array(resp, "probabilities"))
                except client.grpc.RpcError as e:
                    ledger.finished(rid, e.code().name, detail=e.details())
                    if e.code() == SC.UNAVAILABLE:
                        time.sleep(0.01)
        threads = [threading.Thread(target=infer_loop, args=(s,)) for s in range(2)]
        for t in threads:
            t.start()
        time.sleep(2.0)
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=30)
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join(timeout=30)
        check(not any(t.is_alive() for t in threads), "a client is still waiting 30 s after the kill")
        problems = ledger.violations(allowed=("OK", "UNAVAILABLE"))
        check(not problems, "; ".join(problems))
        counts = ledger.counts()
        check(counts.get(("mlp", "OK"), 0) > 0 and counts.get(("mlp", "UNAVAILABLE"), 0) > 0,
              "outcomes around the kill: %s" % counts)
        check(server.proc.returncode == -signal.SIGKILL, "onyxd ended with %s" % server.proc.returncode)
        check(len(load_dirs()) == 1, "after the kill: %s" % load_dirs())

        ready_s = server.start()
        check(load_dirs() == [], "after the restart the killed onyxd's directories remain: %s" % load_dirs())
        check("removed 1 model-file directory left in the temp dir" in server.log(),
              "the restart did not log the removal:\n%s" % base.tail(server.stderr_path))
        for k in range(len(xs)):  # the same client, reconnected
            got = base.output_array(client.infer(client.infer_request("mlp", "input", "FP32", [1, 16],
                                                                      raw=xs[k].tobytes())), "probabilities")
            base.expect_close(got, wants[k])
        print("     kill -9: %s; restart to ready %.2f s" % (
            {c: n for (_, c), n in sorted(counts.items())}, ready_s))

    def truncated_while_loading():
        rng = np.random.default_rng(3)
        w = (rng.standard_normal((BIG_ROWS, BIG_ROWS)) / 64).astype(np.float32)
        whole = big_model(w)
        path = os.path.join(server.repo, "big", "1", "model.onnx")
        write(path, whole)
        stop = threading.Event()
        cuts = random.Random(9)

        def vandal():
            while not stop.is_set():
                write(path, whole)
                time.sleep(cuts.uniform(0, 0.05))
                os.truncate(path, cuts.randrange(len(whole)))
                time.sleep(cuts.uniform(0, 0.05))
        t = threading.Thread(target=vandal)
        t.start()
        outcomes = {}
        try:
            for _ in range(TRUNCATED_LOADS):
                try:
                    client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="big"), timeout=120)
                    outcomes["OK"] = outcomes.get("OK", 0) + 1
                except client.grpc.RpcError as e:
                    check(e.code() in (SC.INVALID_ARGUMENT, SC.UNAVAILABLE) and "big" in (e.details() or ""),
                          "a load of the truncated file: %s %s" % (e.code(), (e.details() or "")[:300]))
                    outcomes[e.code().name] = outcomes.get(e.code().name, 0) + 1
                check(server.proc.poll() is None, "onyxd exited (%s)" % server.proc.returncode)
                client.infer(client.infer_request("mlp", "input", "FP32", [1, 16], raw=xs[0].tobytes()))
        finally:
            stop.set()
            t.join()
        write(path, whole)
        client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="big"), timeout=120)
        x = rng.standard_normal((1, BIG_ROWS)).astype(np.float32)
        got = base.output_array(client.infer(client.infer_request("big", "x", "FP32", [1, BIG_ROWS],
                                                                  raw=x.tobytes())), "y")
        base.expect_close(got, x.astype(np.float64) @ w)
        check(sum(n for c, n in outcomes.items() if c != "OK") > 0, "no load saw a truncated file: %s" % outcomes)
        client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="big"), timeout=60)
        print("     loads of a file truncated meanwhile: %s" % outcomes)

    return [("kill_9_under_load_then_restart", kill_9_under_load_then_restart),
            ("model_truncated_while_loading", truncated_while_loading)]


def main():
    args = base.parse_args(__doc__)
    tmp = tempfile.mkdtemp(prefix="onyx_crash_")
    server = None
    passed = failed = 0
    try:
        mods = base.stubs_in(args.proto_dir, tmp)
        if mods is None:
            return 1
        repo = os.path.join(tmp, "repo")
        shutil.copytree(os.path.join(args.repo, "mlp"), os.path.join(repo, "mlp"))
        mlp_params = base.load_initializers(os.path.join(repo, "mlp", "1", "model.onnx"))
        server = Server(args, mods, repo, tmp)
        try:
            server.start()
        except base.CaseFailure as e:
            print("FAIL startup: %s" % e)
            return 1
        client = base.Client(mods, server.address)
        for name, case in build_cases(server, client, mlp_params):
            failure = base.case_failure(case)
            print("PASS %s" % name if failure is None else "FAIL %s: %s" % (name, failure))
            sys.stdout.flush()
            passed, failed = (passed + 1, failed) if failure is None else (passed, failed + 1)
            if server.proc.poll() is not None:
                print("--- onyxd stderr (tail) ---\n" + base.tail(server.stderr_path))
                break
        client.channel.close()
    finally:
        if server is not None and server.proc is not None and server.proc.poll() is None:
            if base.stop_checked(server.proc, server.stderr_path):
                failed += 1
                print("FAIL onyxd_exit_status: onyxd did not exit 0")
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
