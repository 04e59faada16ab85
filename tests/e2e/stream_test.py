#!/usr/bin/python3
"""End-to-end test of ModelStreamInfer backpressure.

usage: stream_test.py --onyxd BIN --proto-dir DIR --repo DIR

A client that writes requests as fast as it can and reads no replies must not
make onyxd hold an unbounded number of requests and replies: the server stops
reading the stream at its per-stream limit (256 requests started and not yet
answered, or answered and not yet written) and HTTP/2 flow control then blocks
the client's writes.

The case streams to `amplify` (added to a copy of REPO): a 64-byte request
whose reply is the input tiled to 64 KiB, so that the replies onyxd has
written but the client has not read fill the transport after a few dozen.
onyxd logs every request it answers (--request-log-sample-rate 1), so the
test counts what the server read, not only what the client handed to gRPC:
once the client is held back, the server must have answered at most
MAX_STREAM_OUTSTANDING plus what the reply transport holds. Then it reads
every reply and checks each against np.tile.
"""

import os
import re
import shutil
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402
from python_client_test import check  # noqa: E402

OFFERED = 1000000  # far more than any buffer holds: an unbounded server takes them all
MAX_STREAM_OUTSTANDING = 256  # server/grpc/stream_infer.h kDefaultMaxStreamOutstanding
FEATURES = 16
TILES = 1024  # reply: 16 x 1024 floats = 64 KiB
# Replies written to the transport and not read: HTTP/2 windows and socket
# buffers on both sides. Measured: onyxd answers 319 requests (63 replies of
# 64 KiB, about 4 MiB, in the transport) in every run on loopback; 128 (8 MiB)
# leaves room and stays far below what a server that kept reading, or held
# twice its limit, answers.
REPLY_TRANSPORT_SLACK = 128
STALL_WAIT_S = 60.0  # the client must be held back within this
STILL_S = 2.0        # ... for this long without handing over one more request


def write_amplify(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, FEATURES])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, FEATURES * TILES])
    repeats = helper.make_tensor("repeats", TensorProto.INT64, [2], [1, TILES])
    graph = helper.make_graph([helper.make_node("Tile", ["x", "repeats"], ["y"])], "amplify", [x], [y],
                              initializer=[repeats])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    os.makedirs(os.path.dirname(path))
    onnx.save(model, path)


log_path = [None]


def prepare(args, tmp):
    repo = os.path.join(tmp, "repo")
    shutil.copytree(args.repo, repo)
    write_amplify(os.path.join(repo, "amplify", "1", "model.onnx"))
    log_path[0] = os.path.join(tmp, "onyxd.stderr")
    return repo, base.load_initializers(os.path.join(args.repo, "mlp", "1", "model.onnx"))


def answered(prefix):
    """Requests of ids prefix<N> onyxd has answered, from its request log."""
    with open(log_path[0], errors="replace") as f:
        return len(re.findall(r'id="%s\d+"' % prefix, f.read()))


def build_cases(client, params):
    pb = client.pb
    x = np.random.default_rng(5).normal(0.0, 1.0, size=(1, FEATURES)).astype(np.float32)
    want_tile = np.tile(x, (1, TILES))
    mlp_x = np.random.default_rng(6).normal(0.0, 1.0, size=(2, FEATURES)).astype(np.float32)

    def writer_without_reader_is_held_back():
        taken = [0]

        def requests():
            for i in range(OFFERED):
                req = pb.ModelInferRequest(model_name="amplify", id="s%d" % i)
                req.inputs.add(name="x", datatype="FP32", shape=[1, FEATURES])
                req.raw_input_contents.append(x.tobytes())
                taken[0] = i + 1
                yield req

        stream = client.stub.ModelStreamInfer(requests(), timeout=180)
        # gRPC pulls from the generator on its own thread until the buffers on
        # both sides are full; then nothing moves while nobody reads. Both the
        # client's count and the server's answered count must stand still.
        start = time.monotonic()
        last, last_change = (taken[0], answered("s")), start
        while time.monotonic() - last_change < STILL_S:
            check(time.monotonic() - start < STALL_WAIT_S,
                  "the client is still writing to a stream it never read after %.0f s (%d requests, "
                  "%d answered)" % (STALL_WAIT_S, taken[0], answered("s")))
            time.sleep(0.25)
            now = (taken[0], answered("s"))
            if now != last:
                last, last_change = now, time.monotonic()
        stalled_at, server_answered = last
        bound = MAX_STREAM_OUTSTANDING + REPLY_TRANSPORT_SLACK
        check(server_answered <= bound,
              "onyxd answered %d requests of a stream whose client read nothing; want <= %d "
              "(%d outstanding + %d replies in the transport)"
              % (server_answered, bound, MAX_STREAM_OUTSTANDING, REPLY_TRANSPORT_SLACK))
        # Reading resumes the flow: take more replies than were held, all correct.
        got, ids = 0, set()
        for resp in stream:  # in completion order, not necessarily the order sent
            check(not resp.error_message, "reply %d failed: %s" % (got, resp.error_message))
            rid = resp.infer_response.id
            check(re.fullmatch(r"s\d+", rid) and rid not in ids, "reply %d has id %r" % (got, rid))
            ids.add(rid)
            base.expect_close(base.output_array(resp.infer_response, "y"), want_tile)
            got += 1
            if got == stalled_at + 100:
                break
        stream.cancel()
        print("  note: while the client read nothing it handed gRPC %d requests and onyxd answered %d"
              % (stalled_at, server_answered))

    def server_still_serves():
        resp = client.infer(client.infer_request("mlp", "input", "FP32", [2, FEATURES], raw=mlp_x.tobytes()))
        base.expect_close(base.output_array(resp, "probabilities"), base.mlp_forward(params, mlp_x))

    return [
        ("writer_without_reader_is_held_back", writer_without_reader_is_held_back),
        ("server_still_serves", server_still_serves),
    ]


def main():
    return base.run_suite(__doc__, "onyx_stream_", prepare, build_cases,
                          extra_args=("--request-log-sample-rate", "1"), log_level="info")


if __name__ == "__main__":
    sys.exit(main())
