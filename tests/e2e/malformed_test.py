#!/usr/bin/python3
"""End-to-end test: malformed ModelInfer requests get exact gRPC statuses.

usage: malformed_test.py --onyxd BIN --proto-dir DIR --repo DIR

Builds a repository from REPO's `mlp` and `cnn` plus `strings` (a BYTES model
written here: StringNormalizer to upper case, input `text` BYTES [2], no batch
dimension), starts BIN on it with `--max-elements-per-input 200` and a
--config file setting `max_message_bytes: 262144`, then sends one malformed
request per case. Each case names the exact status code (PROTOCOL.md: not
found → NOT_FOUND, bad request → INVALID_ARGUMENT, over a size limit →
RESOURCE_EXHAUSTED, not ready → UNAVAILABLE) and a substring the message must
contain; after each one a valid mlp request must still return the numpy
reference. Prints "PASS name" / "FAIL name: reason" per case and
"N passed, M failed"; exits non-zero on any failure.
"""

import os
import shutil
import struct
import sys
import tempfile
from multiprocessing import shared_memory

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402  stubs, server start/stop, numpy reference

MAX_ELEMENTS = 200
MAX_MESSAGE_BYTES = 262144
SHM_BYTES = 256


def write_strings_model(model_dir):
    """strings/1/model.onnx: upper-cases a BYTES [2] input; not batched."""
    node = helper.make_node("StringNormalizer", ["text"], ["upper"], case_change_action="UPPER")
    graph = helper.make_graph([node], "strings",
                              [helper.make_tensor_value_info("text", TensorProto.STRING, [2])],
                              [helper.make_tensor_value_info("upper", TensorProto.STRING, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(model_dir, "1"))
    onnx.save(model, os.path.join(model_dir, "1", "model.onnx"))
    with open(os.path.join(model_dir, "config.yaml"), "w") as f:
        f.write("max_batch_size: 0\n")


def write_tile_model(model_dir):
    """tile/1/model.onnx: y = Tile(x FP32 [4], repeats INT64 [1]); not batched.
    The reply grows with `repeats` while the request stays small."""
    node = helper.make_node("Tile", ["x", "repeats"], ["y"])
    graph = helper.make_graph([node], "tile",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                               helper.make_tensor_value_info("repeats", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(model_dir, "1"))
    onnx.save(model, os.path.join(model_dir, "1", "model.onnx"))
    with open(os.path.join(model_dir, "config.yaml"), "w") as f:
        f.write("max_batch_size: 0\n")


def build_repository(demo_repo, tmp):
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    for name in ("mlp", "cnn"):
        shutil.copytree(os.path.join(demo_repo, name), os.path.join(repo, name))
    write_strings_model(os.path.join(repo, "strings"))
    write_tile_model(os.path.join(repo, "tile"))
    return repo


def bytes_raw(elements):
    return b"".join(struct.pack("<I", len(e)) + e for e in elements)


def build_cases(client, demo_repo, shm_name):
    pb = client.pb
    SC = client.grpc.StatusCode
    rng = np.random.default_rng(4242)
    mlp_p = base.load_initializers(os.path.join(demo_repo, "mlp", "1", "model.onnx"))
    x = rng.normal(0.0, 1.0, size=(3, 16)).astype(np.float32)
    x_raw = x.tobytes()

    def mlp(shape=(3, 16), raw=x_raw, datatype="FP32", **kw):
        return client.infer_request("mlp", "input", datatype, shape, raw=raw, **kw)

    def two_inputs(first, second, raws):
        req = pb.ModelInferRequest(model_name="mlp")
        req.inputs.add(name=first, datatype="FP32", shape=[3, 16])
        req.inputs.add(name=second, datatype="FP32", shape=[3, 16])
        req.raw_input_contents.extend(raws)
        return req

    def unknown_version():
        req = mlp()
        req.model_version = "7"
        return req

    def empty_model_name():
        req = mlp()
        req.model_name = ""
        return req

    def missing_input():
        return pb.ModelInferRequest(model_name="mlp")

    def raw_count_mismatch():
        req = mlp()
        req.raw_input_contents.append(x_raw)
        return req

    def typed_count_mismatch():
        return client.infer_request("mlp", "input", "FP32", [3, 16], fp32=x.ravel()[:47].tolist())

    def raw_and_typed():
        req = mlp()
        req.inputs[0].contents.fp32_contents.extend(x.ravel().tolist())
        return req

    def wrong_typed_field():
        req = client.infer_request("mlp", "input", "FP32", [3, 16])
        req.inputs[0].contents.int_contents.extend([1] * 48)
        return req

    def bytes_truncated_prefix():
        req = pb.ModelInferRequest(model_name="strings")
        req.inputs.add(name="text", datatype="BYTES", shape=[2])
        req.raw_input_contents.append(bytes_raw([b"ab"]) + b"\x02\x00")
        return req

    def elements_over_limit():
        img = np.zeros((4, 1, 8, 8), dtype=np.float32)
        return client.infer_request("cnn", "image", "FP32", [4, 1, 8, 8], raw=img.tobytes())

    def message_too_large():
        big = np.zeros((MAX_MESSAGE_BYTES // 4 + 1024,), dtype=np.float32)
        return mlp(raw=big.tobytes())

    def shm_request(region, offset, size):
        req = pb.ModelInferRequest(model_name="mlp")
        t = req.inputs.add(name="input", datatype="FP32", shape=[3, 16])
        t.parameters["shared_memory_region"].string_param = region
        if size is not None:
            t.parameters["shared_memory_byte_size"].int64_param = size
        t.parameters["shared_memory_offset"].int64_param = offset
        return req

    def bad_timeout():
        req = mlp()
        req.parameters["timeout"].string_param = "soon"
        return req

    def unload_cnn():
        client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="cnn"),
                                          timeout=base.RPC_TIMEOUT_S)
        img = np.zeros((1, 1, 8, 8), dtype=np.float32)
        return client.infer_request("cnn", "image", "FP32", [1, 1, 8, 8], raw=img.tobytes())

    def with_outputs(*names):
        return mlp(outputs=names)

    def tile(repeats):
        req = client.infer_request("tile", "x", "FP32", [4],
                                   raw=np.arange(4, dtype=np.float32).tobytes())
        extra = req.inputs.add(name="repeats", datatype="INT64", shape=[1])
        del extra  # its contents follow x's in raw_input_contents
        req.raw_input_contents.append(np.array([repeats], dtype=np.int64).tobytes())
        return req

    def reply_too_large():
        # 4 floats tiled 32768 times: a 512 KiB reply from a 40-byte request.
        return tile(MAX_MESSAGE_BYTES // 8)

    def tile_negative_repeats():
        return tile(-1)

    # (name, request builder, exact code, substring of the message)
    malformed = [
        ("unknown_model", lambda: client.infer_request("no_such_model", "input", "FP32", [3, 16],
                                                       raw=x_raw),
         SC.NOT_FOUND, "unknown model 'no_such_model'"),
        ("unknown_version", unknown_version, SC.NOT_FOUND, "model 'mlp' has no version '7'"),
        ("empty_model_name", empty_model_name, SC.INVALID_ARGUMENT, "model_name is empty"),
        ("missing_input", missing_input, SC.INVALID_ARGUMENT,
         "model 'mlp': missing input 'input' (FP32 [-1,16])"),
        ("extra_unknown_input", lambda: two_inputs("input", "bogus", [x_raw, x_raw]),
         SC.INVALID_ARGUMENT, "unknown input 'bogus' (expected one of: input)"),
        ("duplicate_input", lambda: two_inputs("input", "input", [x_raw, x_raw]),
         SC.INVALID_ARGUMENT, "input 'input' given twice"),
        ("wrong_datatype", lambda: mlp(datatype="FP64", raw=x.astype(np.float64).tobytes()),
         SC.INVALID_ARGUMENT, "input 'input': expected datatype FP32, received FP64"),
        ("unknown_datatype_string", lambda: mlp(datatype="FLOAT32"), SC.INVALID_ARGUMENT,
         "unknown datatype 'FLOAT32'"),
        ("wrong_rank", lambda: mlp(shape=[48]), SC.INVALID_ARGUMENT,
         "expected shape [-1,16] (rank 2), received [48] (rank 1)"),
        ("wrong_non_batch_dim", lambda: mlp(shape=[4, 12]), SC.INVALID_ARGUMENT,
         "expected shape [-1,16] (rank 2), received [4,12]"),
        ("negative_dim", lambda: mlp(shape=[-3, 16]), SC.INVALID_ARGUMENT,
         "shape [-3,16] has a negative dimension (dim 0 is -3)"),
        ("zero_batch", lambda: mlp(shape=[0, 16], raw=b""), SC.INVALID_ARGUMENT,
         "expected a batch size in [1, 8] (max_batch_size), received 0"),
        ("batch_over_max_batch_size",
         lambda: mlp(shape=[9, 16], raw=np.zeros((9, 16), np.float32).tobytes()),
         SC.INVALID_ARGUMENT, "expected a batch size in [1, 8] (max_batch_size), received 9"),
        ("raw_input_contents_count_mismatch", raw_count_mismatch, SC.INVALID_ARGUMENT,
         "expected 1 raw_input_contents (one per input), received 2"),
        ("raw_byte_size_mismatch", lambda: mlp(raw=x_raw[:-4]), SC.INVALID_ARGUMENT,
         "expected 192 bytes of raw contents for FP32 [3,16], received 188"),
        ("typed_contents_count_mismatch", typed_count_mismatch, SC.INVALID_ARGUMENT,
         "expected 48 values in fp32_contents for FP32 [3,16], received 47"),
        ("raw_and_typed_contents", raw_and_typed, SC.INVALID_ARGUMENT,
         "raw_input_contents and typed contents cannot be mixed"),
        ("contents_in_wrong_typed_field", wrong_typed_field, SC.INVALID_ARGUMENT,
         "FP32 data must be in fp32_contents only; received values in int_contents"),
        ("unknown_requested_output", lambda: with_outputs("logits"), SC.INVALID_ARGUMENT,
         "unknown output 'logits' (expected one of: probabilities)"),
        ("duplicate_requested_output", lambda: with_outputs("probabilities", "probabilities"),
         SC.INVALID_ARGUMENT, "output 'probabilities' requested twice"),
        ("bytes_truncated_length_prefix", bytes_truncated_prefix, SC.INVALID_ARGUMENT,
         "BYTES raw contents end after 1 of 2 elements"),
        ("elements_over_max_elements_per_input", elements_over_limit, SC.RESOURCE_EXHAUSTED,
         "input 'image': shape [4,1,8,8] has 256 elements, more than max_elements_per_input "
         "(%d)" % MAX_ELEMENTS),
        ("dims_product_overflows_int64", lambda: mlp(shape=[1 << 32, 1 << 32]),
         SC.INVALID_ARGUMENT, "shape [4294967296,4294967296]: the product of its dimensions "
         "overflows int64"),
        ("message_over_max_message_bytes", message_too_large, SC.RESOURCE_EXHAUSTED,
         "vs. %d" % MAX_MESSAGE_BYTES),
        ("shared_memory_unregistered_region", lambda: shm_request("nowhere", 0, 192),
         SC.NOT_FOUND, "input 'input': no shared memory region 'nowhere'"),
        ("shared_memory_range_beyond_region", lambda: shm_request(shm_name, 128, 192),
         SC.INVALID_ARGUMENT, "bytes [128, 320) exceed its byte_size %d" % SHM_BYTES),
        ("shared_memory_byte_size_missing", lambda: shm_request(shm_name, 0, None),
         SC.INVALID_ARGUMENT, "parameter 'shared_memory_byte_size' missing"),
        ("reply_over_max_message_bytes", reply_too_large, SC.RESOURCE_EXHAUSTED,
         "more than max_message_bytes=%d; largest output 'y'" % MAX_MESSAGE_BYTES),
        ("engine_error_names_the_model", tile_negative_repeats, SC.INVALID_ARGUMENT,
         "model 'tile' version 1: "),
        ("timeout_parameter_not_an_integer", bad_timeout, SC.INVALID_ARGUMENT,
         "parameter 'timeout' must be a non-negative integer"),
        # Last: unloads cnn for good.
        ("infer_on_unloaded_model", unload_cnn, SC.UNAVAILABLE, "model 'cnn' is UNAVAILABLE"),
    ]

    def valid_after():
        resp = client.infer(mlp(outputs=["probabilities"]))
        base.expect_close(base.output_array(resp, "probabilities"), base.mlp_forward(mlp_p, x))

    def strings_model_works():
        req = pb.ModelInferRequest(model_name="strings")
        req.inputs.add(name="text", datatype="BYTES", shape=[2])
        req.raw_input_contents.append(bytes_raw([b"onyx", b"MiXed"]))
        resp = client.infer(req)
        base.check(list(resp.outputs[0].shape) == [2], "shape %r" % list(resp.outputs[0].shape))
        base.check(resp.raw_output_contents[0] == bytes_raw([b"ONYX", b"MIXED"]),
                   "output %r" % resp.raw_output_contents[0])

    cases = [("valid_mlp_request", valid_after), ("valid_bytes_request", strings_model_works)]
    for name, build, code, mention in malformed:
        def case(build=build, code=code, mention=mention):
            base.expect_error(client, build(), code, must_mention=mention)
            valid_after()
        cases.append((name, case))
    return cases


def main():
    args = base.parse_args(__doc__)
    tmp = tempfile.mkdtemp(prefix="onyx_malformed_")
    passed = failed = 0
    proc = None
    shm = None
    client = None
    stderr_path = os.path.join(tmp, "onyxd.stderr")
    try:
        mods = base.stubs_in(args.proto_dir, tmp)
        if mods is None:
            print("0 passed, 1 failed")
            return 1
        repo = build_repository(args.repo, tmp)
        config = os.path.join(tmp, "server.yaml")
        with open(config, "w") as f:
            f.write("max_message_bytes: %d\n" % MAX_MESSAGE_BYTES)
        proc, address, _, failure = base.launch_onyxd(
            args.onyxd, repo, mods, tmp,
            extra_args=["--config", config, "--max-elements-per-input", str(MAX_ELEMENTS)])
        if failure is not None:
            print("0 passed, 1 failed")
            return 1
        client = base.Client(mods, address)
        shm = shared_memory.SharedMemory(create=True, size=SHM_BYTES)
        client.stub.SystemSharedMemoryRegister(
            client.pb.SystemSharedMemoryRegisterRequest(name="small", key="/" + shm.name,
                                                        offset=0, byte_size=SHM_BYTES),
            timeout=base.RPC_TIMEOUT_S)
        cases = build_cases(client, args.repo, "small")
        passed, failed = base.run_cases(cases, proc, stderr_path)
        if failed:
            print("--- onyxd stderr (tail) ---\n" + base.tail(stderr_path))
    finally:
        if client is not None:
            client.channel.close()
        if proc is not None:
            failed += base.stop_checked(proc, stderr_path)
        if shm is not None:
            shm.close()
            shm.unlink()
        shutil.rmtree(tmp, ignore_errors=True)

    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
