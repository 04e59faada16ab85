#!/usr/bin/python3
"""End-to-end test of ModelStreamInfer backpressure.

usage: stream_test.py --onyxd BIN --proto-dir DIR --repo DIR

A client that writes requests as fast as it can and reads no replies must not
make onyxd hold an unbounded number of requests and replies: the server stops
reading the stream at its per-stream limit (256 started-but-unwritten
requests) and HTTP/2 flow control then blocks the client's writes. The test
counts how many requests the client managed to hand to gRPC while reading
nothing, then reads every reply and checks each against the numpy reference.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402
from python_client_test import check  # noqa: E402

OFFERED = 1000000  # far more than any buffer holds: an unbounded server takes them all
# Requests in flight plus what the transport buffers on both sides (HTTP/2
# flow-control windows, which grow to some MiB; ~600 bytes per request).
MAX_ACCEPTED_WHILE_STALLED = 300000
STALL_WAIT_S = 30.0  # the client must be held back within this
STILL_S = 2.0        # ... for this long without handing over one more request


def prepare(args, tmp):
    return args.repo, base.load_initializers(os.path.join(args.repo, "mlp", "1", "model.onnx"))


def build_cases(client, params):
    pb = client.pb
    x = np.random.default_rng(5).normal(0.0, 1.0, size=(2, 16)).astype(np.float32)
    want = base.mlp_forward(params, x)

    def writer_without_reader_is_held_back():
        taken = [0]

        def requests():
            for i in range(OFFERED):
                req = pb.ModelInferRequest(model_name="mlp", id=str(i))
                req.inputs.add(name="input", datatype="FP32", shape=[2, 16])
                req.raw_input_contents.append(x.tobytes())
                taken[0] = i + 1
                yield req

        stream = client.stub.ModelStreamInfer(requests(), timeout=120)
        # gRPC pulls from the generator on its own thread until the buffers on
        # both sides are full; then nothing moves while nobody reads.
        start = time.monotonic()
        last, last_change = taken[0], start
        while time.monotonic() - last_change < STILL_S:
            check(time.monotonic() - start < STALL_WAIT_S,
                  "the client is still writing to a stream it never read after %.0f s (%d requests)"
                  % (STALL_WAIT_S, taken[0]))
            time.sleep(0.25)
            if taken[0] != last:
                last, last_change = taken[0], time.monotonic()
        stalled_at = taken[0]
        check(stalled_at < MAX_ACCEPTED_WHILE_STALLED,
              "the client handed %d requests to a stream it never read; want < %d"
              % (stalled_at, MAX_ACCEPTED_WHILE_STALLED))
        # Reading resumes the flow: take a few thousand replies, all correct.
        got = 0
        for resp in stream:
            check(not resp.error_message, "reply %d failed: %s" % (got, resp.error_message))
            base.expect_close(base.output_array(resp.infer_response, "probabilities"), want)
            got += 1
            if got == stalled_at + 1000:
                break
        stream.cancel()
        print("  note: %d requests accepted while the client read nothing" % stalled_at)

    def server_still_serves():
        resp = client.infer(client.infer_request("mlp", "input", "FP32", [2, 16], raw=x.tobytes()))
        base.expect_close(base.output_array(resp, "probabilities"), want)

    return [
        ("writer_without_reader_is_held_back", writer_without_reader_is_held_back),
        ("server_still_serves", server_still_serves),
    ]


def main():
    return base.run_suite(__doc__, "onyx_stream_", prepare, build_cases)


if __name__ == "__main__":
    sys.exit(main())
