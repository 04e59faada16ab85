#!/usr/bin/python3
"""End-to-end test of models whose initializers live in an external-data file.

usage: external_data_test.py --onyxd BIN --proto-dir DIR --repo DIR

Writes a repository of three models of the same graph, y = x @ W + b (x of
shape [batch, 16], W [16, 4], b [4]), whose W is stored in weights.bin beside
model.onnx after 16 bytes of padding (272 bytes in all), pointed at by the
TensorProto's external_data entries:
  good        offset "16", length "256"   - loads and serves
  bad_offset  offset "abc", length "256"  - a non-numeric offset
  bad_length  offset "16", length "1024"  - a range past the end of the file
A non-numeric offset once aborted onyxd at start-up (an uncaught exception
from the parse). Checks that onyxd starts and serves `good` with the values
numpy computes; that RepositoryIndex reports each bad model UNAVAILABLE with a
reason naming the tensor, the key and the value; that inference on a bad
model is UNAVAILABLE; that reloading a bad model by RepositoryModelLoad fails
with INVALID_ARGUMENT and the same reason while onyxd keeps serving `good`;
and that onyxd exits 0 on SIGTERM. --repo is accepted for uniformity and not
used. Prints "PASS name" / "FAIL name: reason" and "N passed, M failed";
exits non-zero on any failure.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402  stubs, server start/stop, cases

check = base.check
PADDING = 16  # bytes before W in weights.bin
# model name -> the external_data entries of W besides "location".
MODELS = {
    "good": {"offset": str(PADDING), "length": "256"},
    "bad_offset": {"offset": "abc", "length": "256"},
    "bad_length": {"offset": str(PADDING), "length": "1024"},
}
# What each bad model's reason must say: the tensor, the key and the value
# (and for the range, the file's size: 16 + 16 * 4 * 4 = 272 bytes).
REASONS = {
    "bad_offset": ["tensor 'W'", "external data key 'offset'", "received 'abc'"],
    "bad_length": ["tensor 'W'", "external data 'length' 1024", "weights.bin", "of 272 bytes"],
}
CONFIG_YAML = "max_batch_size: 4\nbuckets: [1, 4]\n"


def write_model(version_dir, w, b, entries):
    """model.onnx with W in version_dir/weights.bin (after PADDING bytes)."""
    os.makedirs(version_dir)
    with open(os.path.join(version_dir, "weights.bin"), "wb") as f:
        f.write(bytes(PADDING) + w.astype("<f4").tobytes())
    w_proto = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=list(w.shape),
                          data_location=TensorProto.EXTERNAL)
    for key, value in [("location", "weights.bin")] + list(entries.items()):
        entry = w_proto.external_data.add()
        entry.key = key
        entry.value = value
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
         helper.make_node("Add", ["xw", "b"], ["y"], name="add")],
        "external_data",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        initializer=[w_proto, numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    with open(os.path.join(version_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def prepare(args, tmp):
    rng = np.random.default_rng(17)
    w = rng.normal(0.0, 0.5, size=(16, 4)).astype(np.float32)
    b = rng.normal(0.0, 0.5, size=(4,)).astype(np.float32)
    repo = os.path.join(tmp, "repo")
    for name, entries in MODELS.items():
        write_model(os.path.join(repo, name, "1"), w, b, entries)
        with open(os.path.join(repo, name, "config.yaml"), "w") as f:
            f.write(CONFIG_YAML)
    # The good model as the ONNX library reads it, external data included:
    # the reference takes W from there, not from this script's arrays.
    good = onnx.load(os.path.join(repo, "good", "1", "model.onnx"))
    params = {t.name: numpy_helper.to_array(t, base_dir=os.path.join(repo, "good", "1")).astype(np.float64)
              for t in good.graph.initializer}
    return repo, {"params": params, "stderr": os.path.join(tmp, "onyxd.stderr")}


def build_cases(client, ctx):
    pb = client.pb
    SC = client.grpc.StatusCode
    rng = np.random.default_rng(23)
    p = ctx["params"]

    def index():
        idx = client.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=base.RPC_TIMEOUT_S)
        return {m.name: m for m in idx.models}

    def expect_mentions(text, where, wanted):
        for piece in wanted:
            check(piece in text, "%s %r does not mention %r" % (where, text, piece))

    def good_serves():
        m = index().get("good")
        check(m is not None and m.state == "READY",
              "good state %r (%r), want READY" % (m and m.state, m and m.reason))
        for rows in (1, 3):
            x = rng.normal(0.0, 1.0, size=(rows, 16)).astype(np.float32)
            req = client.infer_request("good", "x", "FP32", [rows, 16], raw=x.tobytes(), outputs=["y"])
            base.expect_close(base.output_array(client.infer(req), "y"), x.astype(np.float64) @ p["W"] + p["b"])

    def unavailable_with_reason(name):
        def run():
            models = index()
            check(name in models, "%s missing from RepositoryIndex %r" % (name, sorted(models)))
            m = models[name]
            check(m.state == "UNAVAILABLE", "%s state %r, want UNAVAILABLE" % (name, m.state))
            expect_mentions(m.reason, "%s's RepositoryIndex reason" % name, ["model '%s'" % name] + REASONS[name])
            check(not client.stub.ModelReady(pb.ModelReadyRequest(name=name), timeout=base.RPC_TIMEOUT_S).ready,
                  "%s is ready" % name)
            req = client.infer_request(name, "x", "FP32", [1, 16], raw=bytes(64))
            base.expect_error(client, req, SC.UNAVAILABLE)
        return run

    def refusals_logged():
        with open(ctx["stderr"], errors="replace") as f:
            log = f.read()
        for name, wanted in REASONS.items():
            expect_mentions(log, "the log", ["model '%s'" % name] + wanted)

    def reload_fails_and_good_still_serves():
        for name, wanted in REASONS.items():
            try:
                client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name), timeout=60)
            except client.grpc.RpcError as e:
                check(e.code() == SC.INVALID_ARGUMENT, "reloading %s: status %s (%s), want INVALID_ARGUMENT"
                      % (name, e.code(), e.details()))
                expect_mentions(e.details() or "", "reloading %s: the error" % name, wanted)
            else:
                raise base.CaseFailure("reloading %s succeeded" % name)
            check(index()[name].state == "UNAVAILABLE", "%s is not UNAVAILABLE after the failed reload" % name)
        good_serves()

    return [
        ("good_model_serves_numpy_values", good_serves),
        ("bad_offset_unavailable_with_reason", unavailable_with_reason("bad_offset")),
        ("bad_length_unavailable_with_reason", unavailable_with_reason("bad_length")),
        ("refusals_logged_with_reason", refusals_logged),
        ("reload_of_bad_model_fails_and_good_still_serves", reload_fails_and_good_still_serves),
    ]


def main():
    return base.run_suite(__doc__, "onyx_external_data_", prepare, build_cases)


if __name__ == "__main__":
    sys.exit(main())
