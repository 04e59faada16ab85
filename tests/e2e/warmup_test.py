#!/usr/bin/python3
"""End-to-end test of config.yaml `warmup` and the engine session options.

usage: warmup_test.py --onyxd BIN --proto-dir DIR --repo DIR

Writes the `seq` demo model of scripts/gen_demo_models.py (token ids < 32 and a
mask over a `sequence` dim padded to 4, 8 or 16) to a temporary repository
whose config.yaml warms every session three times on sample tensors from
`<model>/warmup/` (input_ids.pb by name, the mask as input_1.pb in the ONNX
backend-test layout). Checks that it serves answers equal to the numpy
reference; that reloads (RepositoryModelLoad `config`) with random warm-up
inputs and with other session options serve the same answers; that a sample
whose ids are valid only in the first rows fails the load once tiled into a
larger bucket (so samples are what is fed), that a sample of the wrong type or
shape is refused naming the file, the input and expected vs received, and
that bad values of the new keys are refused naming the key - each time with
the previous configuration still serving. --repo is accepted for uniformity
and not used. Prints "PASS name" / "FAIL name: reason" and "N passed, M
failed"; exits non-zero on any failure.
"""

import os
import sys

import numpy as np
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import gen_demo_models  # noqa: E402
import python_client_test as base  # noqa: E402
from python_client_test import CaseFailure, check  # noqa: E402

RPC_TIMEOUT_S = base.RPC_TIMEOUT_S
SAMPLES_YAML = "warmup:\n  runs: 3\n  inputs: warmup\n"


def write_tensor(path, array, name):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def build_cases(client, params, model_dir):
    pb = client.pb
    SC = client.grpc.StatusCode
    rng = np.random.default_rng(5)

    def request(ids, mask):
        req = pb.ModelInferRequest(model_name="seq")
        req.inputs.add(name="input_ids", datatype="INT64", shape=list(ids.shape))
        req.inputs.add(name="attention_mask", datatype="FP32", shape=list(mask.shape))
        req.raw_input_contents.append(ids.astype("<i8").tobytes())
        req.raw_input_contents.append(mask.astype("<f4").tobytes())
        for name in ("hidden", "pooled"):
            req.outputs.add(name=name)
        return req

    def serves_reference():
        for rows, length in ((1, 3), (2, 8), (4, 13)):
            ids = rng.integers(0, gen_demo_models.SEQ_VOCAB, size=(rows, length)).astype(np.int64)
            mask = np.ones((rows, length), dtype=np.float32)
            resp = client.infer(request(ids, mask))
            hidden, pooled = gen_demo_models.seq_reference(params, ids, mask)
            base.expect_close(base.output_array(resp, "hidden"), hidden)
            base.expect_close(base.output_array(resp, "pooled"), pooled)

    def load(extra_yaml):
        req = pb.RepositoryModelLoadRequest(model_name="seq")
        req.parameters["config"].string_param = gen_demo_models.SEQ_CONFIG_YAML + extra_yaml
        client.stub.RepositoryModelLoad(req, timeout=60)

    def load_error(extra_yaml, code, must_mention):
        try:
            load(extra_yaml)
        except client.grpc.RpcError as e:
            if code is not None:
                check(e.code() == code, "status %s (%s)" % (e.code(), e.details()))
            for text in must_mention:
                check(text in (e.details() or ""), "details %r do not mention %r" % (e.details(), text))
            serves_reference()  # the previous configuration still serves
            return
        raise CaseFailure("load succeeded with %r" % extra_yaml)

    def samples_warm_the_model():
        serves_reference()

    def random_inputs_and_session_options_reload():
        load("warmup: {runs: 1, inputs: random}\n")
        serves_reference()
        load("inter_op_threads: 2\nenable_mem_pattern: false\nmem_pattern_cache_size: 2\n"
             "warmup: {runs: 0}\n")
        serves_reference()
        load(SAMPLES_YAML)
        serves_reference()

    def samples_are_what_is_fed():
        # Row 0 is valid; row 1 holds an id past the vocabulary. The batch-1
        # sessions see only row 0, the batch-2 ones both rows.
        bad = os.path.join(model_dir, "rows")
        write_tensor(os.path.join(bad, "input_ids.pb"),
                     np.array([[1, 2, 3], [4, 5, 40]], dtype=np.int64), "input_ids")
        write_tensor(os.path.join(bad, "attention_mask.pb"), np.ones((2, 3), np.float32), "attention_mask")
        load_error("warmup: {inputs: rows}\n", None, ["bucket 2x4", "warm-up run failed"])

    def bad_samples_are_refused():
        wrong = os.path.join(model_dir, "wrong")
        write_tensor(os.path.join(wrong, "input_ids.pb"), np.ones((1, 3), np.float32), "input_ids")
        write_tensor(os.path.join(wrong, "attention_mask.pb"), np.ones((1, 3), np.float32), "attention_mask")
        load_error("warmup: {inputs: wrong}\n", SC.INVALID_ARGUMENT,
                   ["model 'seq'", os.path.join(wrong, "input_ids.pb"), "input 'input_ids'",
                    "expected type int64, received float"])
        write_tensor(os.path.join(wrong, "input_ids.pb"), np.ones((3,), np.int64), "input_ids")
        load_error("warmup: {inputs: wrong}\n", SC.INVALID_ARGUMENT,
                   ["expected shape [batch, sequence]", "received [3]"])
        load_error("warmup: {inputs: absent}\n", SC.INVALID_ARGUMENT,
                   [os.path.join(model_dir, "absent", "input_ids.pb"), "found neither"])

    def bad_values_name_the_key():
        load_error("warmup: {runs: -1}\n", SC.INVALID_ARGUMENT,
                   ["key 'warmup.runs': expected an integer in [0, 1000], received '-1'"])
        load_error("warmup: {inputs: /tmp}\n", SC.INVALID_ARGUMENT,
                   ["key 'warmup.inputs'", "received '/tmp'"])
        load_error("enable_mem_pattern: maybe\n", SC.INVALID_ARGUMENT,
                   ["key 'enable_mem_pattern': expected true or false, received 'maybe'"])
        load_error("mem_pattern_cache_size: 0\n", SC.INVALID_ARGUMENT,
                   ["key 'mem_pattern_cache_size'", "received '0'"])
        load_error("inter_op_threads: -2\n", SC.INVALID_ARGUMENT,
                   ["key 'inter_op_threads'", "received '-2'"])

    return [
        ("samples_warm_the_model", samples_warm_the_model),
        ("random_inputs_and_session_options_reload", random_inputs_and_session_options_reload),
        ("samples_are_what_is_fed", samples_are_what_is_fed),
        ("bad_samples_are_refused", bad_samples_are_refused),
        ("bad_values_name_the_key", bad_values_name_the_key),
    ]



def prepare(args, tmp):
    repo = os.path.join(tmp, "repo")
    params = gen_demo_models.emit_seq(repo)
    model_dir = os.path.join(repo, "seq")
    with open(os.path.join(model_dir, "config.yaml"), "a") as f:
        f.write(SAMPLES_YAML)
    ids = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], dtype=np.int64)
    write_tensor(os.path.join(model_dir, "warmup", "input_ids.pb"), ids, "input_ids")
    write_tensor(os.path.join(model_dir, "warmup", "input_1.pb"), np.ones((2, 5), np.float32),
                 "attention_mask")
    return repo, (params, model_dir)


def main():
    return base.run_suite(__doc__, "onyx_warmup_", prepare,
                          lambda client, context: build_cases(client, *context))


if __name__ == "__main__":
    sys.exit(main())
