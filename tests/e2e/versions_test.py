#!/usr/bin/python3
"""End-to-end test of version policies and RepositoryModelLoad parameters.

usage: versions_test.py --onyxd BIN --proto-dir DIR --repo DIR

Builds its own repository in a temporary directory: model "scale" whose
version v computes y = v * x (x: FP32 [batch, 4]), so every answer says which
version produced it. Starts BIN on it and checks: latest N serves N versions
at once with distinct answers, specific [..], reload under client traffic with
zero lost requests, a failing version UNAVAILABLE while the others serve, and
the `config` / `file:<version>/model.onnx` load parameters. --repo is accepted
for uniformity with the other suites and not used. Prints "PASS name" or
"FAIL name: reason" per case and "N passed, M failed"; exits non-zero on any
failure.
"""

import os
import shutil
import sys
import threading
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402
from python_client_test import CaseFailure, check  # noqa: E402

RPC_TIMEOUT_S = base.RPC_TIMEOUT_S


def scale_model_bytes(factor):
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "factor"], ["y"], name="scale")], "scale",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        initializer=[numpy_helper.from_array(np.array([factor], dtype=np.float32), "factor")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def build_cases(client, repo):
    pb = client.pb
    SC = client.grpc.StatusCode
    model_dir = os.path.join(repo, "scale")
    x = np.arange(1, 9, dtype=np.float32).reshape(2, 4)

    def set_config(text):
        write(os.path.join(model_dir, "config.yaml"), text)

    def request(version=""):
        req = client.infer_request("scale", "x", "FP32", [2, 4], raw=x.tobytes(), outputs=["y"])
        req.model_version = version
        return req

    def answer(version=""):
        """(served version, y) after checking y == version * x."""
        resp = client.infer(request(version))
        served = resp.model_version
        y = base.output_array(resp, "y")
        base.expect_close(y, float(served) * x)
        return served

    def index():
        idx = client.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=RPC_TIMEOUT_S)
        return [(m.version, m.state, m.reason) for m in idx.models if m.name == "scale"]

    def states():
        return [(v, s) for v, s, _ in index()]

    def load(parameters=None):
        req = pb.RepositoryModelLoadRequest(model_name="scale")
        for key, value in (parameters or {}).items():
            if isinstance(value, bytes):
                req.parameters[key].bytes_param = value
            else:
                req.parameters[key].string_param = value
        client.stub.RepositoryModelLoad(req, timeout=60)

    def expect_load_error(code, must_mention, parameters=None):
        try:
            load(parameters)
        except client.grpc.RpcError as e:
            check(e.code() == code, "status %s (%s), want %s" % (e.code(), e.details(), code))
            check(must_mention in (e.details() or ""),
                  "details %r do not mention %r" % (e.details(), must_mention))
            return
        raise CaseFailure("load succeeded, want %s" % code)

    def latest_two_serves_two_versions():
        check(states() == [("2", "READY"), ("3", "READY")], "index %r" % index())
        check(answer() == "3", "version '' is not the highest READY version")
        check(answer("2") == "2", "version 2 answered as another")
        check(answer("3") == "3", "version 3 answered as another")
        base.expect_error(client, request("1"), SC.NOT_FOUND, must_mention="versions: 2, 3")
        # Versions are canonical decimals: "03" does not name version 3.
        base.expect_error(client, request("03"), SC.NOT_FOUND, must_mention="no version '03'")
        ready = lambda v: client.stub.ModelReady(  # noqa: E731
            pb.ModelReadyRequest(name="scale", version=v), timeout=RPC_TIMEOUT_S).ready
        check(ready("2") and ready("3") and ready("") and not ready("1"), "ModelReady per version")
        md = client.stub.ModelMetadata(pb.ModelMetadataRequest(name="scale"),
                                       timeout=RPC_TIMEOUT_S)
        check(list(md.versions) == ["2", "3"], "metadata versions %r" % list(md.versions))
        config = client.stub.ModelConfig(pb.ModelConfigRequest(name="scale"),
                                         timeout=RPC_TIMEOUT_S).config
        check(config.version_policy.WhichOneof("policy_choice") == "latest"
              and config.version_policy.latest.num_versions == 2,
              "ModelConfig version_policy %r" % config.version_policy)
        stats = client.stub.ModelStatistics(pb.ModelStatisticsRequest(name="scale"),
                                            timeout=RPC_TIMEOUT_S).model_stats
        by_version = {s.version: s for s in stats}
        check(sorted(by_version) == ["2", "3"], "statistics versions %r" % sorted(by_version))
        # Each version counts its own requests: 1 for v2 above, 2 for v3 (""
        # and "3"), each a 2-row request.
        check(by_version["2"].inference_count == 2 and by_version["3"].inference_count == 4,
              "inference_count v2 %d v3 %d, want 2 and 4"
              % (by_version["2"].inference_count, by_version["3"].inference_count))

    def specific_versions():
        set_config("version_policy: {specific: [1, 3]}\n")
        load()
        check(states() == [("1", "READY"), ("3", "READY")], "index %r" % index())
        config = client.stub.ModelConfig(pb.ModelConfigRequest(name="scale"),
                                         timeout=RPC_TIMEOUT_S).config
        check(list(config.version_policy.specific.versions) == [1, 3],
              "ModelConfig version_policy %r" % config.version_policy)
        check(answer("1") == "1", "version 1 answered as another")
        base.expect_error(client, request("2"), SC.NOT_FOUND, must_mention="versions: 1, 3")

    def reload_under_traffic_loses_nothing():
        stop = threading.Event()
        lock = threading.Lock()
        results = {"ok": 0, "versions": set(), "failed": []}

        def worker():
            while not stop.is_set():
                try:
                    served = answer()
                    with lock:
                        results["ok"] += 1
                        results["versions"].add(served)
                except (client.grpc.RpcError, CaseFailure) as e:
                    with lock:
                        results["failed"].append(str(e) if isinstance(e, CaseFailure) else
                                                 "%s %s" % (e.code(), e.details()))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for text in ("version_policy: {latest: 1}\n", "version_policy: {specific: [1]}\n",
                         "version_policy: {latest: 2}\n", "version_policy: {specific: [2]}\n"):
                time.sleep(0.2)
                set_config(text)
                load()
            time.sleep(0.2)
        finally:
            stop.set()
            for t in threads:
                t.join()
        check(not results["failed"], "%d of %d requests failed during reloads, first: %s"
              % (len(results["failed"]), len(results["failed"]) + results["ok"],
                 results["failed"][0] if results["failed"] else ""))
        check(results["ok"] > 0, "no request succeeded")
        check(states() == [("2", "READY")], "index after reloads %r" % index())
        print("  note: %d requests answered by versions %s across 4 reloads"
              % (results["ok"], sorted(results["versions"])))

    def failing_version_is_unavailable_while_others_serve():
        write(os.path.join(model_dir, "4", "model.onnx"), b"not an onnx model")
        set_config("version_policy: all\n")
        # The load answers with the failed version's own error (a file that is
        # not ONNX: INVALID_ARGUMENT); the version is UNAVAILABLE in the index.
        expect_load_error(SC.INVALID_ARGUMENT, "version 4")
        got = index()
        check([(v, s) for v, s, _ in got] ==
              [("1", "READY"), ("2", "READY"), ("3", "READY"), ("4", "UNAVAILABLE")],
              "index %r" % got)
        check("version 4" in got[3][2], "reason of version 4: %r" % got[3][2])
        check(answer() == "3", "version '' must be the highest READY version")
        base.expect_error(client, request("4"), SC.UNAVAILABLE, must_mention="version 4")
        shutil.rmtree(os.path.join(model_dir, "4"))

    def bad_policy_is_refused_and_the_model_keeps_serving():
        set_config("version_policy: {latest: zero}\n")
        expect_load_error(SC.INVALID_ARGUMENT, "version_policy.latest")
        check(answer() == "3", "model stopped serving after a refused reload")

    def load_parameters_override_config_and_files():
        load({"config": '{"version_policy": {"specific": [2]}}'})
        check(states() == [("2", "READY")], "index after config override %r" % index())
        load({"config": '{"max_batch_size": 4}', "file:5/model.onnx": scale_model_bytes(5.0)})
        check(states() == [("5", "READY")], "index after file override %r" % index())
        check(answer() == "5", "the uploaded version 5 is not served")
        check(not os.path.exists(os.path.join(model_dir, "5")), "file written into the repository")
        expect_load_error(SC.INVALID_ARGUMENT, "bogus", {"bogus": "1"})
        expect_load_error(SC.INVALID_ARGUMENT, "file:../5/model.onnx",
                          {"file:../5/model.onnx": b"x"})
        expect_load_error(SC.INVALID_ARGUMENT, "file:/tmp/model.onnx",
                          {"file:/tmp/model.onnx": b"x"})
        expect_load_error(SC.INVALID_ARGUMENT, "version_policy.latest",
                          {"config": '{"version_policy": {"latest": 0}}'})
        check(answer() == "5", "refused loads changed what is served")

    return [
        ("latest_two_serves_two_versions", latest_two_serves_two_versions),
        ("specific_versions", specific_versions),
        ("reload_under_traffic_loses_nothing", reload_under_traffic_loses_nothing),
        ("failing_version_is_unavailable_while_others_serve",
         failing_version_is_unavailable_while_others_serve),
        ("bad_policy_is_refused_and_the_model_keeps_serving",
         bad_policy_is_refused_and_the_model_keeps_serving),
        ("load_parameters_override_config_and_files", load_parameters_override_config_and_files),
    ]


def prepare(args, tmp):
    repo = os.path.join(tmp, "repo")
    for v in (1, 2, 3):
        write(os.path.join(repo, "scale", str(v), "model.onnx"), scale_model_bytes(float(v)))
    write(os.path.join(repo, "scale", "config.yaml"), "version_policy: {latest: 2}\n")
    return repo, repo


def main():
    return base.run_suite(__doc__, "onyx_versions_", prepare, build_cases)



if __name__ == "__main__":
    sys.exit(main())
