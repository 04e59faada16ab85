#!/usr/bin/python3
"""End-to-end test of padded dimensions (config.yaml `padded_dims`).

usage: padding_test.py --onyxd BIN --proto-dir DIR --repo DIR

Writes the `seq` demo model of scripts/gen_demo_models.py (token ids and a mask
over a symbolic `sequence` dim, padded to 4, 8 or 16) to a temporary
repository, starts BIN on it and sends requests of mixed lengths concurrently,
so that the batcher pads and merges them. Every answer must equal the numpy
reference run on the request's own, unpadded inputs: `hidden` sliced back to
the true length, `pooled` unaffected by the padding. Also checks the limit
(longer than 16 -> INVALID_ARGUMENT naming input, dim and limit) and that a
padded_dims config not matching the model is refused naming the key. --repo is
accepted for uniformity and not used. Prints "PASS name" / "FAIL name: reason"
and "N passed, M failed"; exits non-zero on any failure.
"""

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import gen_demo_models  # noqa: E402
import python_client_test as base  # noqa: E402
from python_client_test import CaseFailure, check  # noqa: E402

RPC_TIMEOUT_S = base.RPC_TIMEOUT_S


def build_cases(client, params):
    pb = client.pb
    SC = client.grpc.StatusCode
    rng = np.random.default_rng(99)

    def request(ids, mask):
        req = pb.ModelInferRequest(model_name="seq")
        a = req.inputs.add(name="input_ids", datatype="INT64", shape=list(ids.shape))
        b = req.inputs.add(name="attention_mask", datatype="FP32", shape=list(mask.shape))
        req.raw_input_contents.append(ids.astype("<i8").tobytes())
        req.raw_input_contents.append(mask.astype("<f4").tobytes())
        del a, b
        for name in ("hidden", "pooled"):
            req.outputs.add(name=name)
        return req

    def example(rows, length):
        ids = rng.integers(1, gen_demo_models.SEQ_VOCAB, size=(rows, length)).astype(np.int64)
        mask = np.ones((rows, length), dtype=np.float32)
        if length > 2:
            mask[0, -1] = 0.0  # a client-side mask survives the server's padding
        return ids, mask

    def expect_reference(resp, ids, mask):
        hidden, pooled = gen_demo_models.seq_reference(params, ids, mask)
        base.expect_close(base.output_array(resp, "hidden"), hidden)
        base.expect_close(base.output_array(resp, "pooled"), pooled)

    def mixed_lengths_concurrently():
        # Lengths straddle every padded size (4, 8, 16), including exact fits.
        shapes = [(1, n) for n in (1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16)] * 3
        shapes += [(2, 3), (2, 6), (3, 11), (2, 16), (1, 1)]
        examples = [example(r, n) for r, n in shapes]
        with ThreadPoolExecutor(max_workers=16) as pool:
            futures = [pool.submit(client.infer, request(ids, mask)) for ids, mask in examples]
            responses = [f.result() for f in futures]
        for (ids, mask), resp in zip(examples, responses):
            expect_reference(resp, ids, mask)
        stats = client.stub.ModelStatistics(pb.ModelStatisticsRequest(name="seq"),
                                            timeout=RPC_TIMEOUT_S).model_stats[0]
        rows = sum(r for r, _ in shapes)
        check(stats.inference_count == rows, "inference_count %d, want %d"
              % (stats.inference_count, rows))
        runs = sum(b.compute_infer.count for b in stats.batch_stats)
        merged_rows = sum(b.batch_size * b.compute_infer.count for b in stats.batch_stats)
        check(runs == stats.execution_count, "batch_stats count %d runs, execution_count %d"
              % (runs, stats.execution_count))
        check(merged_rows == rows, "batch_stats cover %d rows, want %d" % (merged_rows, rows))
        print("  note: %d requests (%d rows) in %d engine runs"
              % (len(shapes), rows, stats.execution_count))

    def longer_than_the_largest_size_is_refused():
        ids, mask = example(1, 17)
        base.expect_error(client, request(ids, mask), SC.INVALID_ARGUMENT,
                          must_mention="input 'input_ids' dimension 'sequence'")
        base.expect_error(client, request(ids, mask), SC.INVALID_ARGUMENT,
                          must_mention="largest padded size 16")
        ids, _ = example(1, 5)
        _, mask = example(1, 6)
        base.expect_error(client, request(ids, mask), SC.INVALID_ARGUMENT,
                          must_mention="disagree")
        ids, mask = example(1, 6)
        expect_reference(client.infer(request(ids, mask)), ids, mask)  # still serving

    def config_not_matching_the_model_is_refused():
        def load_error(config, must_mention):
            req = pb.RepositoryModelLoadRequest(model_name="seq")
            req.parameters["config"].string_param = config
            try:
                client.stub.RepositoryModelLoad(req, timeout=60)
            except client.grpc.RpcError as e:
                check(e.code() == SC.INVALID_ARGUMENT, "status %s (%s)" % (e.code(), e.details()))
                check(must_mention in (e.details() or ""),
                      "details %r do not mention %r" % (e.details(), must_mention))
                return
            raise CaseFailure("load succeeded with %s" % config)

        load_error('{"padded_dims": {"tokens": {"sizes": [8]}}}',
                   "key 'padded_dims': expected a dim_param of the model's inputs "
                   "('batch', 'sequence'), received 'tokens'")
        load_error('{"padded_dims": {"sequence": {"sizes": [8], "pad_values": {"ids": 0}}}}',
                   "key 'padded_dims.sequence.pad_values.ids'")
        load_error('{"padded_dims": {"sequence": {"sizes": [16, 8]}}}', "strictly ascending")
        ids, mask = example(2, 9)
        expect_reference(client.infer(request(ids, mask)), ids, mask)  # old config still serves

    return [
        ("mixed_lengths_concurrently", mixed_lengths_concurrently),
        ("longer_than_the_largest_size_is_refused", longer_than_the_largest_size_is_refused),
        ("config_not_matching_the_model_is_refused", config_not_matching_the_model_is_refused),
    ]


def prepare(args, tmp):
    repo = os.path.join(tmp, "repo")
    return repo, gen_demo_models.emit_seq(repo)


def main():
    return base.run_suite(__doc__, "onyx_padding_", prepare, build_cases)



if __name__ == "__main__":
    sys.exit(main())
