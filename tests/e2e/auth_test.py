#!/usr/bin/python3
"""End-to-end test of onyxd's bearer-token authentication.

usage: auth_test.py --onyxd BIN --proto-dir DIR --repo DIR

Generates stubs for every .proto in DIR and, from their ServiceDescriptors,
the list of every method of every service onyxd serves (inference, health,
admin), so a new RPC is covered without editing this file. Then:
  1. onyxd with --inference-token-file and --control-token-file (log level
     trace, every request logged): every method without a token must answer
     UNAUTHENTICATED except the probes (health Check/Watch, ServerLive,
     ServerReady); every control method with the inference token and every
     inference method with the control token PERMISSION_DENIED; valid tokens
     serve (mlp against numpy, bearer and Triton's
     triton-grpc-protocol-<key> header); a rewritten token file takes effect
     without a restart; no token appears in error texts, the log or /metrics;
  2. only --inference-token-file: control RPCs are refused (PERMISSION_DENIED);
  3. --control-rpcs disabled, no tokens: inference open, control refused;
  4. TLS and mutual TLS with tokens (needs `openssl`);
  5. a token file with a bad line: exit 2 naming the key and line, not the text.
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed".
"""

import glob
import importlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402
from python_client_test import check  # noqa: E402
import tls_test  # noqa: E402  make_pki

RELOAD_WAIT_S = 30.0  # onyxd polls token files every second
PUBLIC = {"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
          "/inference.GRPCInferenceService/ServerLive",
          "/inference.GRPCInferenceService/ServerReady"}
INFERENCE = {"/inference.GRPCInferenceService/ModelInfer",
             "/inference.GRPCInferenceService/ModelStreamInfer"}


def is_control(path):
    return ("/RepositoryModel" in path or "SharedMemory" in path
            or path.startswith("/onyx.admin.v1.Admin/"))


def all_stubs(proto_dir, out_dir):
    """Generates and imports <name>_pb2 for every .proto in proto_dir."""
    plugin = shutil.which("grpc_python_plugin")
    protos = sorted(glob.glob(os.path.join(proto_dir, "*.proto")))
    res = subprocess.run(["protoc", "-I", proto_dir, "--python_out=" + out_dir,
                          "--grpc_out=" + out_dir, "--plugin=protoc-gen-grpc=" + plugin] + protos,
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError("protoc failed: " + res.stderr.strip())
    sys.path.insert(0, out_dir)
    mods = {}
    for proto in protos:
        name = os.path.splitext(os.path.basename(proto))[0]
        for suffix in ("_pb2", "_pb2_grpc"):
            mods[name + suffix] = importlib.import_module(name + suffix)
    return mods


def all_methods(mods):
    """(path, method descriptor, request class) of every service method."""
    from google.protobuf import message_factory
    out = []
    for name, mod in sorted(mods.items()):
        if not name.endswith("_pb2") or not hasattr(mod, "DESCRIPTOR"):
            continue
        for service in mod.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                path = "/%s/%s" % (service.full_name, method.name)
                request_class = message_factory.GetMessageClass(method.input_type) \
                    if hasattr(message_factory, "GetMessageClass") \
                    else message_factory.MessageFactory().GetPrototype(method.input_type)
                out.append((path, method, request_class))
    return out


def call(channel, path, method, request_class, metadata=None):
    """Calls one method with an empty request; returns the status code (OK when
    a public server-streaming call delivered its first message)."""
    import grpc
    kwargs = dict(request_serializer=lambda m: m.SerializeToString(),
                  response_deserializer=lambda b: b)
    try:
        if method.client_streaming:
            fn = channel.stream_stream(path, **kwargs)
            responses = fn(iter([request_class()]), metadata=metadata, timeout=base.RPC_TIMEOUT_S)
            for _ in responses:
                responses.cancel()
                break
        elif method.server_streaming:
            fn = channel.unary_stream(path, **kwargs)
            responses = fn(request_class(), metadata=metadata, timeout=base.RPC_TIMEOUT_S)
            for _ in responses:  # Watch: its first status, then stop watching
                responses.cancel()
                break
        else:
            channel.unary_unary(path, **kwargs)(request_class(), metadata=metadata,
                                                timeout=base.RPC_TIMEOUT_S)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.CANCELLED:
            return grpc.StatusCode.OK, ""  # our own cancel after the first message
        return e.code(), e.details() or ""


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def start(onyxd, repo, tmp, name, args, creds=None, mods=None):
    grpc_port, metrics_port = base.free_ports(2)
    address = "127.0.0.1:%d" % grpc_port
    metrics = "127.0.0.1:%d" % metrics_port
    stderr_path = os.path.join(tmp, name + ".stderr")
    cmd = [onyxd, "--model-repository", repo, "--grpc-address", address,
           "--metrics-address", metrics] + args
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    reason = base.wait_ready(mods, address, proc, creds=creds)
    return proc, address, metrics, stderr_path, reason


def main():
    args = base.parse_args(__doc__)
    tmp = tempfile.mkdtemp(prefix="onyx_auth_")
    outcomes = []
    procs = []
    try:
        import grpc
        stub_dir = os.path.join(tmp, "stubs")
        os.makedirs(stub_dir)
        mods = all_stubs(args.proto_dir, stub_dir)
        pb = mods["grpc_service_pb2"]
        methods = all_methods(mods)
        params = base.load_initializers(os.path.join(args.repo, "mlp", "1", "model.onnx"))
        x = np.random.default_rng(21).normal(0.0, 1.0, size=(2, 16)).astype(np.float32)

        inference_token = "inf-" + secrets.token_hex(16)
        control_token = "ctl-" + secrets.token_hex(16)
        rotated_token = "rot-" + secrets.token_hex(16)
        unknown_token = "unk-" + secrets.token_hex(16)
        all_tokens = [inference_token, control_token, rotated_token, unknown_token]
        inference_file = os.path.join(tmp, "inference.tokens")
        control_file = os.path.join(tmp, "control.tokens")
        write_atomically(inference_file, "# inference clients\n%s\n" % inference_token)
        write_atomically(control_file, "%s\n" % control_token)

        def run(name, fn):
            outcomes.append((name, base.case_failure(fn)))

        def bearer(token):
            return [("authorization", "Bearer " + token)]

        def infer(channel, metadata):
            stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
            req = pb.ModelInferRequest(model_name="mlp")
            req.inputs.add(name="input", datatype="FP32", shape=[2, 16])
            req.raw_input_contents.append(x.tobytes())
            resp = stub.ModelInfer(req, metadata=metadata, timeout=base.RPC_TIMEOUT_S)
            base.expect_close(base.output_array(resp, "probabilities"), base.mlp_forward(params, x))

        def no_token_in(text, where):
            for token in all_tokens:
                check(token not in text, "a token appears in %s" % where)

        # 1. Both token sets.
        proc, address, metrics, stderr1, reason = start(
            args.onyxd, args.repo, tmp, "both",
            ["--inference-token-file", inference_file, "--control-token-file", control_file,
             "--log-level", "trace", "--request-log-sample-rate", "1"], mods=mods)
        procs.append(proc)
        channel = grpc.insecure_channel(address)

        def ready():
            check(reason is None, "%s\n%s" % (reason, base.tail(stderr1)))
        run("startup_with_both_token_files", ready)

        def every_method_without_token():
            ready()
            check(len(methods) >= 22, "only %d methods found in the descriptors" % len(methods))
            for path, method, request_class in methods:
                code, details = call(channel, path, method, request_class)
                no_token_in(details, path)
                if path in PUBLIC:
                    check(code not in (grpc.StatusCode.UNAUTHENTICATED,
                                       grpc.StatusCode.PERMISSION_DENIED),
                          "%s is public but answered %s (%s)" % (path, code, details))
                else:
                    check(code == grpc.StatusCode.UNAUTHENTICATED,
                          "%s without a token: %s (%s), want UNAUTHENTICATED" % (path, code, details))
        run("every_method_without_token_is_unauthenticated", every_method_without_token)

        def every_method_with_the_wrong_token():
            ready()
            for path, method, request_class in methods:
                if path in PUBLIC:
                    continue
                for token, wrong in ((inference_token, is_control(path)),
                                     (control_token, path in INFERENCE)):
                    code, details = call(channel, path, method, request_class, bearer(token))
                    no_token_in(details, path)
                    if wrong:
                        check(code == grpc.StatusCode.PERMISSION_DENIED,
                              "%s with the other kind of token: %s (%s), want PERMISSION_DENIED"
                              % (path, code, details))
                    else:
                        check(code not in (grpc.StatusCode.UNAUTHENTICATED,
                                           grpc.StatusCode.PERMISSION_DENIED),
                              "%s with its token: %s (%s)" % (path, code, details))
                code, details = call(channel, path, method, request_class, bearer(unknown_token))
                no_token_in(details, path)
                check(code == grpc.StatusCode.UNAUTHENTICATED,
                      "%s with an unknown token: %s, want UNAUTHENTICATED" % (path, code))
        run("each_token_opens_only_its_own_rpcs", every_method_with_the_wrong_token)

        def valid_tokens_serve():
            ready()
            infer(channel, bearer(inference_token))
            infer(channel, [("authorization", "bearer " + inference_token)])
            infer(channel, [("triton-grpc-protocol-infer-key", inference_token)])
            stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
            index = stub.RepositoryIndex(pb.RepositoryIndexRequest(), metadata=bearer(control_token),
                                         timeout=base.RPC_TIMEOUT_S)
            check(any(m.name == "mlp" for m in index.models), "RepositoryIndex lacks mlp")
            stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="mlp"),
                                     metadata=bearer(control_token), timeout=60)
            admin = mods["admin_pb2_grpc"].AdminStub(channel)
            admin.DumpArenas(mods["admin_pb2"].DumpArenasRequest(), metadata=bearer(control_token),
                             timeout=base.RPC_TIMEOUT_S)
            infer(channel, bearer(inference_token))
        run("valid_tokens_serve_inference_load_and_admin", valid_tokens_serve)

        def rotation():
            ready()
            write_atomically(inference_file, "%s\n" % rotated_token)
            deadline = time.monotonic() + RELOAD_WAIT_S
            while True:
                try:
                    infer(channel, bearer(rotated_token))
                    break
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAUTHENTICATED, "rotated token: %s" % e.code())
                    check(time.monotonic() < deadline,
                          "the rewritten token file was not applied within %.0f s" % RELOAD_WAIT_S)
                    time.sleep(0.2)
            try:
                infer(channel, bearer(inference_token))
                raise base.CaseFailure("the replaced token still works")
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.UNAUTHENTICATED,
                      "the replaced token: %s, want UNAUTHENTICATED" % e.code())
        run("rewritten_token_file_applies_without_restart", rotation)

        def no_token_in_logs_or_metrics():
            ready()
            with urllib.request.urlopen("http://%s/metrics" % metrics, timeout=10) as resp:
                no_token_in(resp.read().decode("utf-8", "replace"), "/metrics")
            with open(stderr1, errors="replace") as f:
                log = f.read()
            check("refused a call" in log and 'model="mlp"' in log,
                  "the trace log lacks the refusals or the request lines it should have")
            no_token_in(log, "onyxd's log")
        run("tokens_never_in_log_or_metrics", no_token_in_logs_or_metrics)
        channel.close()
        base.stop(proc)

        # 2. Inference tokens only: control RPCs cannot be opened.
        write_atomically(inference_file, "%s\n" % inference_token)
        proc, address, _, stderr2, reason2 = start(
            args.onyxd, args.repo, tmp, "inference_only",
            ["--inference-token-file", inference_file], mods=mods)
        procs.append(proc)

        def inference_only():
            check(reason2 is None, "%s\n%s" % (reason2, base.tail(stderr2)))
            with grpc.insecure_channel(address) as ch:
                infer(ch, bearer(inference_token))
                for path, method, request_class in methods:
                    if is_control(path):
                        for md in (None, bearer(inference_token)):
                            code, details = call(ch, path, method, request_class, md)
                            check(code == grpc.StatusCode.PERMISSION_DENIED and
                                  "control_token_file" in details,
                                  "%s: %s (%s), want PERMISSION_DENIED" % (path, code, details))
        run("inference_tokens_only_refuse_control_rpcs", inference_only)
        base.stop(proc)

        # 3. Control RPCs disabled without tokens.
        proc, address, _, stderr3, reason3 = start(
            args.onyxd, args.repo, tmp, "control_disabled", ["--control-rpcs", "disabled"], mods=mods)
        procs.append(proc)

        def control_disabled():
            check(reason3 is None, "%s\n%s" % (reason3, base.tail(stderr3)))
            with grpc.insecure_channel(address) as ch:
                infer(ch, None)
                for path, method, request_class in methods:
                    code, details = call(ch, path, method, request_class)
                    if is_control(path):
                        check(code == grpc.StatusCode.PERMISSION_DENIED,
                              "%s: %s, want PERMISSION_DENIED" % (path, code))
                    else:
                        check(code not in (grpc.StatusCode.UNAUTHENTICATED,
                                           grpc.StatusCode.PERMISSION_DENIED),
                              "%s: %s (%s)" % (path, code, details))
        run("control_rpcs_disabled", control_disabled)
        base.stop(proc)

        # 4. TLS and mutual TLS with tokens.
        pki = os.path.join(tmp, "pki")
        os.makedirs(pki)
        tls_test.make_pki(pki)
        p = lambda name: os.path.join(pki, name)  # noqa: E731
        server_trust = grpc.ssl_channel_credentials(root_certificates=tls_test.read(p("ca.pem")))
        proc, address, _, stderr4, reason4 = start(
            args.onyxd, args.repo, tmp, "tls",
            ["--tls-cert-file", p("server.pem"), "--tls-key-file", p("server.key"),
             "--inference-token-file", inference_file], creds=server_trust, mods=mods)
        procs.append(proc)

        def tls_with_tokens():
            check(reason4 is None, "%s\n%s" % (reason4, base.tail(stderr4)))
            with grpc.secure_channel(address, server_trust) as ch:
                infer(ch, bearer(inference_token))
                try:
                    infer(ch, None)
                    raise base.CaseFailure("TLS without a token was served")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAUTHENTICATED, "no token: %s" % e.code())
            with grpc.insecure_channel(address) as ch:
                try:
                    infer(ch, bearer(inference_token))
                    raise base.CaseFailure("a plaintext channel was served by a TLS port")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAVAILABLE, "plaintext: %s" % e.code())
        run("tls_with_tokens", tls_with_tokens)
        base.stop(proc)

        client_creds = grpc.ssl_channel_credentials(
            root_certificates=tls_test.read(p("ca.pem")), private_key=tls_test.read(p("client.key")),
            certificate_chain=tls_test.read(p("client.pem")))
        proc, address, _, stderr5, reason5 = start(
            args.onyxd, args.repo, tmp, "mtls",
            ["--tls-cert-file", p("server.pem"), "--tls-key-file", p("server.key"),
             "--tls-client-ca-file", p("ca.pem"), "--control-token-file", control_file],
            creds=client_creds, mods=mods)
        procs.append(proc)

        def mtls_with_tokens():
            check(reason5 is None, "%s\n%s" % (reason5, base.tail(stderr5)))
            with grpc.secure_channel(address, client_creds) as ch:
                infer(ch, None)  # inference stays open: no inference token file
                admin = mods["admin_pb2_grpc"].AdminStub(ch)
                admin.DumpArenas(mods["admin_pb2"].DumpArenasRequest(),
                                 metadata=bearer(control_token), timeout=base.RPC_TIMEOUT_S)
                try:
                    admin.DumpArenas(mods["admin_pb2"].DumpArenasRequest(), timeout=base.RPC_TIMEOUT_S)
                    raise base.CaseFailure("DumpArenas without a token was served")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAUTHENTICATED, "no token: %s" % e.code())
            with grpc.secure_channel(address, server_trust) as ch:
                try:
                    infer(ch, None)
                    raise base.CaseFailure("a client without a certificate was served")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAVAILABLE, "no certificate: %s" % e.code())
        run("mtls_with_tokens", mtls_with_tokens)
        base.stop(proc)

        # 5. A bad token file stops onyxd before it serves.
        def bad_token_file_exits_2():
            bad = os.path.join(tmp, "bad.tokens")
            write_atomically(bad, "%s\nhalf %s\n" % (inference_token, control_token))
            res = subprocess.run([args.onyxd, "--model-repository", args.repo,
                                  "--control-token-file", bad], capture_output=True, text=True,
                                 timeout=30)
            check(res.returncode == 2, "exit status %d, want 2 (%r)" % (res.returncode, res.stderr))
            check("control_token_file" in res.stderr and "line 2" in res.stderr,
                  "stderr %r does not name control_token_file and line 2" % res.stderr)
            no_token_in(res.stderr, "the startup error")
        run("bad_token_file_exits_2", bad_token_file_exits_2)
    except Exception as e:  # noqa: BLE001 - reported, with the cases already run
        outcomes.append(("setup", "%s: %s" % (type(e).__name__, e)))
    finally:
        for proc in procs:
            base.stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    return base.report(outcomes)


if __name__ == "__main__":
    sys.exit(main())
