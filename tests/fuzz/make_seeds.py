#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz (committed; rerun after changing it),
each split into accepted/ and refused/ seeds:

    /usr/bin/python3 tests/fuzz/make_seeds.py

corpus/model    small ONNX models: element-wise, MatMul/Gemm, Conv with
                BatchNormalization and pooling, shape arithmetic (Shape, Gather,
                Concat, Reshape), If and Loop subgraphs, a GRU, a batch-first
                LSTM between Transposes, Resize, a quantized pair;
corpus/request  ModelInferRequests for request_fuzzer.cc's signatures: raw and
                typed contents, BYTES, shared memory inputs and outputs,
                parameters;
corpus/config   server.yaml and config.yaml texts (config/examples among them);
corpus/bytes    BYTES encodings (count byte, then length-prefixed elements);
corpus/shm      region and range choices (shm_fuzzer.cc's layout).
"""
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import python_client_test as base  # noqa: E402


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def models():
    rng = np.random.default_rng(0)
    w = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    out = {}
    out["add"] = model([helper.make_node("Add", ["x", "w"], ["y"])], [f32("x", [4])], [f32("y", [4])],
                       [init("w", w(4))])
    out["mlp"] = model([helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
                        helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)],
                       [f32("x", ["batch", 8])], [f32("y", ["batch", 3])],
                       [init("w1", w(8, 6)), init("w2", w(3, 6)), init("b2", w(3))])
    out["conv"] = model([
        helper.make_node("Conv", ["x", "k", "kb"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "dk"], ["d"], group=4, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["d"], ["g"]),
        helper.make_node("Flatten", ["g"], ["y"])],
        [f32("x", [1, 3, 8, 8])], [f32("y", [1, 4])],
        [init("k", w(4, 3, 3, 3)), init("kb", w(4)), init("s", w(4)), init("b", w(4)), init("m", w(4)),
         init("v", np.abs(w(4)) + 1), init("dk", w(4, 1, 3, 3))])
    out["shape_arith"] = model([
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
        helper.make_node("Concat", ["d0", "minus1"], ["ns"], axis=0),
        helper.make_node("Reshape", ["x", "ns"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
        helper.make_node("ReduceSum", ["t", "axes"], ["y"], keepdims=0)],
        [f32("x", ["n", 2, 3])], [f32("y", [None])],
        [init("i0", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64)),
         init("axes", np.array([1], np.int64))])
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["o"])], "then", [], [f32("o", [2])])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["o"])], "else", [], [f32("o", [2])])
    out["if"] = model([helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                       helper.make_node("Greater", ["s", "zero"], ["c"]),
                       helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                      [f32("x", [2])], [f32("y", [2])], [init("zero", np.float32(0))])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), f32("acc_in", [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), f32("acc_out", [2])])
    out["loop"] = model([helper.make_node("Loop", ["n", "t", "a0"], ["y"], body=body)],
                        [f32("x", [2])], [f32("y", [2])],
                        [init("n", np.array(3, np.int64)), init("t", np.array(True)), init("a0", w(2))])
    out["gru"] = model([helper.make_node("GRU", ["x", "W", "R", "B"], ["y", "h"], hidden_size=3)],
                       [f32("x", [2, 1, 4])], [f32("y", [2, 1, 1, 3]), f32("h", [1, 1, 3])],
                       [init("W", w(1, 9, 4)), init("R", w(1, 9, 3)), init("B", w(1, 18))])
    out["resize_where"] = model([
        helper.make_node("Resize", ["x", "", "scales"], ["r"], mode="nearest"),
        helper.make_node("Greater", ["r", "zero"], ["c"]),
        helper.make_node("Where", ["c", "r", "zero"], ["m"]),
        helper.make_node("Cast", ["m"], ["y"], to=TensorProto.FLOAT16)],
        [f32("x", [1, 1, 2, 2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 1, 4, 4])],
        [init("scales", np.array([1, 1, 2, 2], np.float32)), init("zero", np.float32(0))])
    out["quantized"] = model([
        helper.make_node("QuantizeLinear", ["x", "sc", "zp"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "sc", "zp"], ["y"])],
        [f32("x", [6])], [f32("y", [6])],
        [init("sc", np.float32(0.1)), init("zp", np.uint8(128))])
    out["softmax_attention"] = model([
        helper.make_node("MatMul", ["q", "k"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("LayerNormalization", ["p", "g", "b"], ["y"], axis=-1)],
        [f32("q", [1, 4, 8]), f32("k", [1, 8, 4])], [f32("y", [1, 4, 4])], [init("g", w(4)), init("b", w(4))])
    # A Hugging Face attention block's core: head split / key transpose /
    # head merge Transposes, the scale and the mask Add (the strided-product
    # and masked-softmax rewrites).
    heads = [1, 4, 2, 3]  # batch, sequence, heads, head size
    out["attention_heads"] = model([
        helper.make_node("Transpose", ["q"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k"], ["kh"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v"], ["vh"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qh", "kh"], ["s"]),
        helper.make_node("Div", ["s", "scale"], ["ss"]),
        helper.make_node("Add", ["ss", "mask"], ["sm"]),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vh"], ["c"]),
        helper.make_node("Transpose", ["c"], ["y"], perm=[0, 2, 1, 3])],
        [f32("q", heads), f32("k", heads), f32("v", heads), f32("mask", [1, 1, 1, 4])], [f32("y", heads)],
        [init("scale", np.float32(1.7320508))])
    # A batch-first bidirectional LSTM as PyTorch exports it: the Transposes
    # around it fold into the layer's strided form.
    out["lstm_batch_first"] = model([
        helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
        helper.make_node("LSTM", ["xt", "W", "R", "B"], ["y", "h"], hidden_size=3, direction="bidirectional"),
        helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3])],
        [f32("x", [2, 3, 4])], [f32("yt", [3, 2, 2, 3]), f32("h", [2, 2, 3])],
        [init("W", w(2, 12, 4)), init("R", w(2, 12, 3)), init("B", w(2, 24))])
    return out


def requests(pb):
    out = {}
    x = np.arange(32, dtype=np.float32).reshape(2, 16)

    def req(name, **kw):
        r = pb.ModelInferRequest(model_name=name, **kw)
        return r

    r = req("mlp", id="raw")
    t = r.inputs.add(name="input", datatype="FP32", shape=[2, 16])
    r.raw_input_contents.append(x.tobytes())
    r.outputs.add(name="output")
    out["mlp_raw"] = r.SerializeToString()

    r = req("mlp")
    t = r.inputs.add(name="input", datatype="FP32", shape=[1, 16])
    t.contents.fp32_contents.extend(range(16))
    r.parameters["timeout"].int64_param = 1000
    out["mlp_typed"] = r.SerializeToString()

    r = req("mlp")
    t = r.inputs.add(name="input", datatype="FP32", shape=[1, 16])
    t.parameters["shared_memory_region"].string_param = "fuzz"
    t.parameters["shared_memory_byte_size"].int64_param = 64
    t.parameters["shared_memory_offset"].int64_param = 128
    o = r.outputs.add(name="output")
    o.parameters["shared_memory_region"].string_param = "fuzz"
    o.parameters["shared_memory_byte_size"].uint64_param = 16
    out["mlp_shared_memory"] = r.SerializeToString()

    r = req("strings")
    r.inputs.add(name="text", datatype="BYTES", shape=[3])
    r.raw_input_contents.append(b"".join(struct.pack("<I", len(s)) + s for s in (b"a", b"", b"hello")))
    out["strings_raw"] = r.SerializeToString()

    r = req("strings")
    t = r.inputs.add(name="text", datatype="BYTES", shape=[2])
    t.contents.bytes_contents.extend([b"x", b"yz"])
    r.outputs.add(name="length")
    out["strings_typed"] = r.SerializeToString()

    r = req("mixed")
    r.inputs.add(name="ids", datatype="INT64", shape=[2, 3])
    r.inputs.add(name="mask", datatype="BOOL", shape=[2, 3])
    r.inputs.add(name="scale", datatype="FP16", shape=[])
    r.raw_input_contents.extend([np.arange(6, dtype=np.int64).tobytes(), bytes([1, 0, 1, 1, 0, 2]),
                                 np.float16(0.5).tobytes()])
    r.outputs.add(name="y")
    r.outputs.add(name="z")
    out["mixed_raw"] = r.SerializeToString()

    r = req("mixed")
    t = r.inputs.add(name="ids", datatype="INT64", shape=[2, 1])
    t.contents.int64_contents.extend([7, -7])
    t = r.inputs.add(name="mask", datatype="BOOL", shape=[2, 1])
    t.contents.bool_contents.extend([True, False])
    t = r.inputs.add(name="scale", datatype="FP16", shape=[])
    t.parameters["shared_memory_region"].string_param = "fuzz"
    t.parameters["shared_memory_byte_size"].int64_param = 2
    out["refused_typed_and_shared_memory"] = r.SerializeToString()

    r = req("mixed")
    r.inputs.add(name="ids", datatype="INT64", shape=[2, 2])
    r.inputs.add(name="mask", datatype="BOOL", shape=[2, 2])
    t = r.inputs.add(name="scale", datatype="FP16", shape=[])
    t.parameters["shared_memory_region"].string_param = "fuzz"
    t.parameters["shared_memory_byte_size"].int64_param = 2
    t.parameters["shared_memory_offset"].uint64_param = 6
    r.raw_input_contents.extend([np.arange(4, dtype=np.int64).tobytes(), bytes([1, 0, 0, 1])])
    out["mixed_raw_and_shared_memory"] = r.SerializeToString()
    return out


def configs():
    out = {}
    for name in ("server.yaml", "model_config.yaml"):
        with open(os.path.join(ROOT, "config", "examples", name)) as f:
            out["example_" + name.replace(".", "_")] = f.read().encode()
    out["model_small"] = b"max_batch_size: 4\nbuckets: [1, 2, 4]\ndynamic_batching: {max_queue_delay_us: 100}\n"
    out["model_padded"] = (b"padded_dims:\n  sequence:\n    sizes: [8, 16]\n    pad_values: {ids: 0}\n"
                           b"version_policy: {specific: [1, 3]}\nwarmup: {runs: 1, inputs: random}\n")
    out["server_small"] = (b"grpc_address: 127.0.0.1:8001\nlog_level: info\ntransport:\n"
                           b"  max_concurrent_streams: 64\ncontrol_rpcs: disabled\n")
    return out


def bytes_inputs():
    enc = lambda items: b"".join(struct.pack("<I", len(s)) + s for s in items)  # noqa: E731
    return {"three": bytes([3]) + enc([b"a", b"", b"hello"]), "empty": bytes([0]),
            "one_long": bytes([1]) + enc([b"x" * 300]), "refused_prefix_past_end": bytes([1]) + struct.pack("<I", 9) + b"abc"}


def shm_inputs():
    def layout(reg_kind, reg_off, size_kind, reg_size, region, off_kind, off, bs_kind, bs, off_type, bs_type):
        return (struct.pack("<BQ", reg_kind, reg_off) + struct.pack("<BQ", size_kind, reg_size) + bytes([region]) +
                struct.pack("<BQ", off_kind, off) + struct.pack("<BQ", bs_kind, bs) + bytes([off_type, bs_type]))
    return {"in_range": layout(0, 16, 3, 1024, 0, 0, 8, 0, 32, 0, 1),
            "to_the_end": layout(0, 0, 1, 32, 0, 1, 0, 0, 32, 1, 0),
            "refused_wrapping": layout(0, 0, 3, 4096, 0, 2, 0, 2, 0, 1, 1),
            "refused_string_params": layout(0, 0, 3, 100, 0, 0, 4, 0, 4, 2, 2),
            "refused_unknown_region": layout(0, 0, 3, 100, 1, 0, 4, 0, 4, 0, 0)}


def write_all(kind, items):
    """corpus/KIND/accepted: seeds the target must accept (the replay test
    checks it); corpus/KIND/refused: seeds named refused_*, which it must not
    crash on."""
    d = os.path.join(HERE, "corpus", kind)
    shutil.rmtree(d, ignore_errors=True)
    for name, data in sorted(items.items()):
        sub = "refused" if name.startswith("refused_") else "accepted"
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        with open(os.path.join(d, sub, name[len("refused_"):] if sub == "refused" else name), "wb") as f:
            f.write(data)
    print("%s: %d seeds" % (kind, len(items)))


def main():
    tmp = tempfile.mkdtemp()
    try:
        mods = base.stubs_in(os.path.join(ROOT, "proto"), tmp)
        if mods is None:
            return 1
        write_all("model", models())
        write_all("request", requests(mods["grpc_service_pb2"]))
        write_all("config", configs())
        write_all("bytes", bytes_inputs())
        write_all("shm", shm_inputs())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
