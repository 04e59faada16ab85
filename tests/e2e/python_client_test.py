#!/usr/bin/python3
"""End-to-end test of onyxd over loopback gRPC, written from the published protocol.

usage: python_client_test.py --onyxd BIN --proto-dir DIR --repo DIR

Generates Python stubs from DIR's .proto files with protoc + grpc_python_plugin,
starts BIN on two free loopback ports against the model repository REPO (as
written by scripts/gen_demo_models.py), waits for ServerReady, then runs named
cases. Expected inference results come from a numpy forward pass over the
models' initializers, independent of onyx's engine. Prints "PASS name" or
"FAIL name: reason" per case and a final "N passed, M failed"; exits non-zero on
any failure. onyxd is always stopped (SIGTERM, then SIGKILL after 10 s).
"""

import argparse
import importlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

READY_TIMEOUT_S = 60.0
RPC_TIMEOUT_S = 10.0
RTOL = 1e-4
ATOL = 1e-5

PROTOS = ("grpc_service.proto", "model_config.proto", "health.proto")


class CaseFailure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise CaseFailure(message)


# ---------------------------------------------------------------- stubs

def generate_stubs(proto_dir, out_dir):
    protoc = shutil.which("protoc")
    plugin = shutil.which("grpc_python_plugin")
    if protoc is None or plugin is None:
        raise RuntimeError("protoc and grpc_python_plugin must be on PATH")
    cmd = [protoc, "-I", proto_dir, "--python_out=" + out_dir, "--grpc_out=" + out_dir,
           "--plugin=protoc-gen-grpc=" + plugin]
    cmd += [os.path.join(proto_dir, p) for p in PROTOS]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError("protoc failed: " + res.stderr.strip())
    sys.path.insert(0, out_dir)
    mods = {}
    for name in ("grpc_service_pb2", "grpc_service_pb2_grpc", "health_pb2", "health_pb2_grpc"):
        mods[name] = importlib.import_module(name)
    return mods


# -------------------------------------------------------- numpy reference

def load_initializers(path):
    model = onnx.load(path)
    return {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}


def mlp_forward(p, x):
    h = np.maximum(x.astype(np.float64) @ p["W1"] + p["b1"], 0.0)
    h = np.maximum(h @ p["W2"].T + p["b2"], 0.0)  # Gemm transB=1.
    z = h @ p["W3"] + p["b3"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def conv_pad1(x, w, b):
    """3x3 conv, stride 1, pads 1, via im2col (a different method from the generator's loops)."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], axis=2)
    # cols: [n, c, 9, h, w]; w: [m, c, 3, 3] -> [m, c, 9]
    return np.einsum("nckhw,mck->nmhw", cols, w.reshape(w.shape[0], c, 9)) + b[None, :, None, None]


def cnn_forward(p, x):
    h = np.maximum(conv_pad1(x.astype(np.float64), p["conv1_W"], p["conv1_B"]), 0.0)
    n, c, hh, ww = h.shape
    h = h.reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
    h = np.maximum(conv_pad1(h, p["conv2_W"], p["conv2_B"]), 0.0)
    return h.mean(axis=(2, 3)) @ p["fc_W"] + p["fc_b"]


# ---------------------------------------------------------------- server

def free_ports(count):
    socks, ports = [], []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def tail(path, lines=40):
    try:
        with open(path, "r", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "<cannot read %s: %s>" % (path, e)


def stop(proc):
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        sys.stderr.write("note: onyxd still running 10 s after SIGTERM; sending SIGKILL\n")
        proc.kill()
        proc.wait()


def stop_checked(proc, stderr_path):
    """Stops onyxd; returns 1 (one more failure), after printing its exit
    status and stderr tail, when it did not exit 0; else 0."""
    stop(proc)
    if proc.returncode in (0, None):
        return 0
    print("onyxd exited with status %s" % proc.returncode)
    print("--- onyxd stderr (tail) ---\n" + tail(stderr_path))
    return 1


# ----------------------------------------------------------------- cases

class Client:
    def __init__(self, mods, address):
        import grpc
        self.grpc = grpc
        self.pb = mods["grpc_service_pb2"]
        self.hpb = mods["health_pb2"]
        self.channel = grpc.insecure_channel(address)
        self.stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(self.channel)
        self.health = mods["health_pb2_grpc"].HealthStub(self.channel)

    def infer_request(self, model, name, datatype, shape, raw=None, fp32=None, outputs=()):
        req = self.pb.ModelInferRequest(model_name=model)
        t = req.inputs.add(name=name, datatype=datatype, shape=list(shape))
        if raw is not None:
            req.raw_input_contents.append(raw)
        if fp32 is not None:
            t.contents.fp32_contents.extend(fp32)
        for o in outputs:
            req.outputs.add(name=o)
        return req

    def infer(self, req):
        return self.stub.ModelInfer(req, timeout=RPC_TIMEOUT_S)


def output_array(resp, name):
    names = [o.name for o in resp.outputs]
    check(name in names, "output %r missing, got %r" % (name, names))
    i = names.index(name)
    out = resp.outputs[i]
    check(out.datatype == "FP32", "output datatype %r, want FP32" % out.datatype)
    if len(resp.raw_output_contents) > 0:
        check(len(resp.raw_output_contents) == len(resp.outputs),
              "%d raw_output_contents for %d outputs"
              % (len(resp.raw_output_contents), len(resp.outputs)))
        data = np.frombuffer(resp.raw_output_contents[i], dtype="<f4")
    else:
        data = np.array(out.contents.fp32_contents, dtype=np.float32)
    shape = list(out.shape)
    check(int(np.prod(shape)) == data.size,
          "output %s: %d elements for shape %r" % (name, data.size, shape))
    return data.reshape(shape)


def expect_close(got, want):
    check(list(got.shape) == list(want.shape),
          "shape %r, want %r" % (list(got.shape), list(want.shape)))
    if not np.allclose(got, want, rtol=RTOL, atol=ATOL):
        err = np.max(np.abs(got.astype(np.float64) - want))
        raise CaseFailure("values differ from reference (max abs err %.3g)" % err)


def expect_error(client, req, code, must_mention=None):
    try:
        client.infer(req)
    except client.grpc.RpcError as e:
        check(e.code() == code, "status %s (%s), want %s" % (e.code(), e.details(), code))
        if must_mention is not None:
            check(must_mention in (e.details() or ""),
                  "details %r do not mention %r" % (e.details(), must_mention))
        return
    raise CaseFailure("request succeeded, want %s" % code)


def build_cases(client, repo):
    pb = client.pb
    SC = client.grpc.StatusCode
    rng = np.random.default_rng(1234)
    mlp_p = load_initializers(os.path.join(repo, "mlp", "1", "model.onnx"))
    cnn_p = load_initializers(os.path.join(repo, "cnn", "1", "model.onnx"))
    x3 = rng.normal(0.0, 1.0, size=(3, 16)).astype(np.float32)
    img2 = rng.normal(0.0, 1.0, size=(2, 1, 8, 8)).astype(np.float32)

    def server_live():
        check(client.stub.ServerLive(pb.ServerLiveRequest(), timeout=RPC_TIMEOUT_S).live,
              "live is false")

    def server_ready():
        check(client.stub.ServerReady(pb.ServerReadyRequest(), timeout=RPC_TIMEOUT_S).ready,
              "ready is false")

    def server_metadata():
        md = client.stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=RPC_TIMEOUT_S)
        check(md.name == "onyx", "name %r, want 'onyx'" % md.name)

    def model_ready():
        r = client.stub.ModelReady(pb.ModelReadyRequest(name="mlp"), timeout=RPC_TIMEOUT_S)
        check(r.ready, "mlp not ready")

    def model_metadata():
        md = client.stub.ModelMetadata(pb.ModelMetadataRequest(name="mlp"), timeout=RPC_TIMEOUT_S)
        check(md.name == "mlp", "name %r" % md.name)
        ins = [(t.name, t.datatype, list(t.shape)) for t in md.inputs]
        outs = [(t.name, t.datatype, list(t.shape)) for t in md.outputs]
        check(ins == [("input", "FP32", [-1, 16])], "inputs %r" % ins)
        check(outs == [("probabilities", "FP32", [-1, 4])], "outputs %r" % outs)

    def repository_index():
        idx = client.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=RPC_TIMEOUT_S)
        states = {m.name: m.state for m in idx.models}
        for name in ("mlp", "cnn"):
            check(states.get(name) == "READY", "%s state %r (index %r)"
                  % (name, states.get(name), states))

    def infer_mlp_raw():
        req = client.infer_request("mlp", "input", "FP32", [3, 16], raw=x3.tobytes(),
                                   outputs=["probabilities"])
        expect_close(output_array(client.infer(req), "probabilities"), mlp_forward(mlp_p, x3))

    def infer_mlp_typed():
        req = client.infer_request("mlp", "input", "FP32", [3, 16], fp32=x3.ravel().tolist())
        expect_close(output_array(client.infer(req), "probabilities"), mlp_forward(mlp_p, x3))

    def infer_cnn():
        req = client.infer_request("cnn", "image", "FP32", [2, 1, 8, 8], raw=img2.tobytes(),
                                   outputs=["logits"])
        expect_close(output_array(client.infer(req), "logits"), cnn_forward(cnn_p, img2))

    def unknown_model():
        req = client.infer_request("no_such_model", "input", "FP32", [3, 16], raw=x3.tobytes())
        expect_error(client, req, SC.NOT_FOUND)

    def wrong_datatype():
        req = client.infer_request("mlp", "input", "INT32", [3, 16],
                                   raw=np.zeros((3, 16), dtype="<i4").tobytes())
        expect_error(client, req, SC.INVALID_ARGUMENT, must_mention="input")

    def wrong_shape():
        req = client.infer_request("mlp", "input", "FP32", [3, 15],
                                   raw=np.zeros((3, 15), dtype="<f4").tobytes())
        expect_error(client, req, SC.INVALID_ARGUMENT)

    def raw_size_mismatch():
        req = client.infer_request("mlp", "input", "FP32", [3, 16], raw=x3.tobytes()[:-4])
        expect_error(client, req, SC.INVALID_ARGUMENT)

    def good_after_bad():
        infer_mlp_raw()

    def health_check():
        r = client.health.Check(client.hpb.HealthCheckRequest(service=""), timeout=RPC_TIMEOUT_S)
        check(r.status == client.hpb.HealthCheckResponse.SERVING,
              "status %s" % client.hpb.HealthCheckResponse.ServingStatus.Name(r.status))

    return [
        ("server_live", server_live),
        ("server_ready", server_ready),
        ("server_metadata", server_metadata),
        ("model_ready_mlp", model_ready),
        ("model_metadata_mlp", model_metadata),
        ("repository_index", repository_index),
        ("infer_mlp_raw", infer_mlp_raw),
        ("infer_mlp_fp32_contents", infer_mlp_typed),
        ("infer_cnn_raw", infer_cnn),
        ("infer_unknown_model_not_found", unknown_model),
        ("infer_wrong_datatype_invalid_argument", wrong_datatype),
        ("infer_wrong_shape_invalid_argument", wrong_shape),
        ("infer_raw_size_mismatch_invalid_argument", raw_size_mismatch),
        ("infer_good_after_bad", good_after_bad),
        ("health_check_serving", health_check),
    ]


def wait_ready(mods, address, proc, creds=None):
    """Returns None once ServerReady is true, else a reason string; with
    `creds` (grpc channel credentials) the channel is TLS.

    Each attempt uses a fresh channel: a channel whose first connects were
    refused sits in gRPC's reconnect backoff (seconds) after the port opens.
    """
    import grpc
    pb = mods["grpc_service_pb2"]
    deadline = time.monotonic() + READY_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return "onyxd exited with status %s before ready" % proc.returncode
        channel = grpc.insecure_channel(address) if creds is None else grpc.secure_channel(address, creds)
        with channel:
            stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
            try:
                if stub.ServerReady(pb.ServerReadyRequest(), timeout=1.0).ready:
                    return None
                last = "ready is false"
            except grpc.RpcError as e:
                if e.code() not in (grpc.StatusCode.UNAVAILABLE,
                                    grpc.StatusCode.DEADLINE_EXCEEDED):
                    return "ServerReady failed: %s %s" % (e.code(), e.details())
                last = "%s %s" % (e.code(), e.details())
        time.sleep(0.2)
    return "not ready%s after %.0f s (last: %s)" % ("" if creds is None else " over TLS", READY_TIMEOUT_S,
                                                   last)


def parse_args(doc, extra=None):
    """The flags every e2e suite takes: --onyxd, --proto-dir, --repo; `extra`,
    when given, adds a suite's own to the parser."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--onyxd", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--repo", required=True)
    if extra is not None:
        extra(ap)
    return ap.parse_args()


def stubs_in(proto_dir, tmp):
    """Python stubs generated from proto_dir into tmp/stubs; None (after
    printing the FAIL line) when generation fails."""
    try:
        stub_dir = os.path.join(tmp, "stubs")
        os.makedirs(stub_dir)
        return generate_stubs(proto_dir, stub_dir)
    except Exception as e:  # noqa: BLE001 - reported as a case
        print("FAIL generate_stubs: %s" % e)
        return None


def launch_onyxd(onyxd, repo, mods, tmp, extra_args=(), log_level="warn"):
    """Starts onyxd on free loopback ports and waits until it is ready.

    extra_args are appended to the command line; log_level is --log-level.

    Returns (proc, grpc_address, metrics_address, failure): failure is None when
    ready, else a reason (the FAIL line and the stderr tail are printed here).
    proc may be set even on failure and must be stopped by the caller."""
    grpc_port, metrics_port = free_ports(2)
    address = "127.0.0.1:%d" % grpc_port
    metrics_address = "127.0.0.1:%d" % metrics_port
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    cmd = [onyxd, "--model-repository", repo, "--grpc-address", address,
           "--metrics-address", metrics_address, "--log-level", log_level] + list(extra_args)
    try:
        with open(stderr_path, "wb") as err, open(os.path.join(tmp, "onyxd.stdout"), "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err)
    except OSError as e:
        reason = "cannot run %s: %s" % (onyxd, e)
        print("FAIL startup: %s" % reason)
        return None, address, metrics_address, reason
    reason = wait_ready(mods, address, proc)
    if reason is not None:
        print("FAIL startup: %s" % reason)
        print("--- onyxd stderr (tail) ---\n" + tail(stderr_path))
    return proc, address, metrics_address, reason


def run_suite(doc, prefix, prepare, build_cases, extra_args=(), log_level="warn"):
    """The whole life of a suite against one onyxd: parses the common flags,
    makes a temp dir (removed at the end), generates stubs, calls
    prepare(args, tmp) -> (repo, context), starts onyxd on repo with
    extra_args and log_level (its stderr is tmp/onyxd.stderr), runs build_cases(client, context) (client.metrics_address is
    onyxd's /metrics listener) and stops onyxd (a non-zero exit status fails
    the suite). Prints the summary line; returns the exit
    status for sys.exit."""
    args = parse_args(doc)
    tmp = tempfile.mkdtemp(prefix=prefix)
    passed = failed = 0
    proc = None
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    try:
        mods = stubs_in(args.proto_dir, tmp)
        if mods is None:
            print("0 passed, 1 failed")
            return 1
        repo, context = prepare(args, tmp)
        proc, address, metrics_address, failure = launch_onyxd(args.onyxd, repo, mods, tmp,
                                                               extra_args=extra_args,
                                                               log_level=log_level)
        if failure is not None:
            print("0 passed, 1 failed")
            return 1
        client = Client(mods, address)
        client.metrics_address = metrics_address
        try:
            cases = build_cases(client, context)
        except Exception as e:  # noqa: BLE001 - e.g. an unreadable model file
            print("FAIL setup: %s: %s" % (type(e).__name__, e))
            print("0 passed, 1 failed")
            return 1
        passed, failed = run_cases(cases, proc, stderr_path)
        client.channel.close()
    finally:
        if proc is not None:
            failed += stop_checked(proc, stderr_path)
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


def case_failure(fn):
    """Runs one case: None when it passed, else why it failed. Any exception
    fails only this case (a broken case must not hide the others)."""
    import grpc
    try:
        fn()
        return None
    except CaseFailure as e:
        return str(e)
    except grpc.RpcError as e:
        return "rpc %s: %s" % (e.code(), e.details())
    except Exception as e:  # noqa: BLE001
        return "%s: %s" % (type(e).__name__, e)


def report(outcomes):
    """Prints a PASS/FAIL line per (name, failure or None) and the summary;
    returns the exit status for sys.exit (1 also when nothing ran)."""
    passed = sum(1 for _, f in outcomes if f is None)
    failed = len(outcomes) - passed
    for name, f in outcomes:
        print("PASS %s" % name if f is None else "FAIL %s: %s" % (name, f))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


def run_cases(cases, proc, stderr_path):
    """Runs (name, fn) cases in order, printing PASS/FAIL lines; stops early,
    failing the rest, if onyxd dies. Returns (passed, failed)."""
    passed = failed = 0
    for i, (name, fn) in enumerate(cases):
        failure = case_failure(fn)
        if failure is None:
            print("PASS %s" % name)
            passed += 1
        else:
            print("FAIL %s: %s" % (name, failure))
            failed += 1
        sys.stdout.flush()
        if proc.poll() is not None:
            print("onyxd exited early with status %s" % proc.returncode)
            print("--- onyxd stderr (tail) ---\n" + tail(stderr_path))
            for rest, _ in cases[i + 1:]:
                print("FAIL %s: onyxd not running" % rest)
                failed += 1
            break
    return passed, failed


def main():
    return run_suite(__doc__, "onyx_e2e_", lambda args, tmp: (args.repo, args.repo), build_cases)


if __name__ == "__main__":
    sys.exit(main())
