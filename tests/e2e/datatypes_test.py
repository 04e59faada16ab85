#!/usr/bin/python3
"""End-to-end test of every KServe v2 datatype through onyxd, raw and typed.

usage: datatypes_test.py --onyxd BIN --proto-dir DIR --repo DIR

Writes a repository of Identity models (one per datatype: BOOL, UINT8..UINT64,
INT8..INT64, FP16, FP32, FP64, BF16, BYTES; input and output [batch, n]) with
onnx.helper, starts BIN on it (--repo is accepted for the common flags but not
used) and, per datatype:
  - ModelMetadata reports the datatype string and shape [-1, -1], ModelConfig
    the matching TYPE_* enum value (TYPE_STRING for BYTES);
  - ModelInfer with raw_input_contents for shapes [1,3], [2,0] and [3,5]
    returns the input unchanged: same datatype, same shape, and output bytes
    equal to the numpy input's little-endian bytes (BYTES: each element as a
    4-byte little-endian length, then its bytes);
  - the same shapes through the typed contents field the protocol assigns
    (bool_contents, int_contents for INT8/16/32, int64_contents, uint_contents
    for UINT8/16/32, uint64_contents, fp32_contents, fp64_contents,
    bytes_contents) give the same bytes; FP16 and BF16, raw only, are
    INVALID_ARGUMENT in a typed field.
Values include each integer type's extremes, signed zero, infinities, a BF16
NaN payload (an Identity model must return them bit for bit), empty strings
and binary bytes. Prints "PASS name" / "FAIL name: reason" per case and
"N passed, M failed"; exits non-zero on any failure.
"""

import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_client_test as base  # noqa: E402  stubs, server start/stop, cases

check = base.check
SHAPES = ([1, 3], [2, 0], [3, 5])
OPSET = 17

# wire datatype -> (ONNX element type, numpy dtype of the wire bytes, typed field).
# BF16 travels as its 16-bit patterns (numpy has no bfloat16); FP16/BF16 have
# no typed field.
DATATYPES = {
    "BOOL": (TensorProto.BOOL, np.bool_, "bool_contents"),
    "UINT8": (TensorProto.UINT8, np.uint8, "uint_contents"),
    "UINT16": (TensorProto.UINT16, np.uint16, "uint_contents"),
    "UINT32": (TensorProto.UINT32, np.uint32, "uint_contents"),
    "UINT64": (TensorProto.UINT64, np.uint64, "uint64_contents"),
    "INT8": (TensorProto.INT8, np.int8, "int_contents"),
    "INT16": (TensorProto.INT16, np.int16, "int_contents"),
    "INT32": (TensorProto.INT32, np.int32, "int_contents"),
    "INT64": (TensorProto.INT64, np.int64, "int64_contents"),
    "FP16": (TensorProto.FLOAT16, np.float16, None),
    "FP32": (TensorProto.FLOAT, np.float32, "fp32_contents"),
    "FP64": (TensorProto.DOUBLE, np.float64, "fp64_contents"),
    "BF16": (TensorProto.BFLOAT16, np.uint16, None),
    "BYTES": (TensorProto.STRING, object, "bytes_contents"),
}


def model_name(datatype):
    return "identity_" + datatype.lower()


def write_repository(root):
    for datatype, (elem, _, _) in DATATYPES.items():
        x = helper.make_tensor_value_info("input", elem, ["batch", "n"])
        y = helper.make_tensor_value_info("output", elem, ["batch", "n"])
        graph = helper.make_graph([helper.make_node("Identity", ["input"], ["output"])],
                                  model_name(datatype), [x], [y])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        version_dir = os.path.join(root, model_name(datatype), "1")
        os.makedirs(version_dir)
        onnx.save(model, os.path.join(version_dir, "model.onnx"))


# ---------------------------------------------------------------- values

def sample(datatype, shape, rng):
    """A numpy array of `shape` for `datatype`, edge values first."""
    count = int(np.prod(shape))
    _, dtype, _ = DATATYPES[datatype]
    if datatype == "BYTES":
        edge = [b"", b"\x00\x01\xff", "h\u00e9llo \u2603".encode(), b"x" * 300]
        vals = edge + [bytes(rng.integers(0, 256, size=int(rng.integers(0, 20))).astype(np.uint8))
                       for _ in range(count)]
        return np.array(vals[:count], dtype=object).reshape(shape)
    if datatype == "BOOL":
        edge = np.array([True, False])
        vals = rng.integers(0, 2, size=count).astype(np.bool_)
    elif datatype == "BF16":
        # bfloat16 bit patterns: 1.0, -0.0, +inf, a NaN payload, then random.
        edge = np.array([0x3F80, 0x8000, 0x7F80, 0x7FC1], dtype=np.uint16)
        vals = rng.integers(0, 1 << 16, size=count, dtype=np.uint16)
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        edge = np.array([info.min, info.max, 0, 1], dtype=dtype)
        vals = rng.integers(info.min, info.max, size=count, dtype=dtype, endpoint=True)
    else:
        info = np.finfo(dtype)
        edge = np.array([-0.0, np.inf, -np.inf, info.max, info.tiny, -1.5], dtype=dtype)
        vals = rng.normal(0.0, 100.0, size=count).astype(dtype)
    n = min(count, len(edge))
    vals[:n] = edge[:n]
    return vals.reshape(shape)


def raw_bytes(datatype, array):
    """The protocol's raw encoding of `array`."""
    if datatype == "BYTES":
        return b"".join(struct.pack("<I", len(v)) + v for v in array.ravel())
    _, dtype, _ = DATATYPES[datatype]
    return np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()


def typed_values(datatype, array):
    """`array` as Python values for its typed contents field."""
    if datatype == "BYTES":
        return list(array.ravel())
    if datatype == "BOOL":
        return [bool(v) for v in array.ravel()]
    return array.ravel().tolist()


# ---------------------------------------------------------------- cases

def build_cases(client, _context):
    pb = client.pb
    SC = client.grpc.StatusCode
    rng = np.random.default_rng(2026)
    cases = []

    def request(datatype, shape, array, typed):
        req = pb.ModelInferRequest(model_name=model_name(datatype))
        t = req.inputs.add(name="input", datatype=datatype, shape=shape)
        if typed:
            getattr(t.contents, DATATYPES[datatype][2]).extend(typed_values(datatype, array))
        else:
            req.raw_input_contents.append(raw_bytes(datatype, array))
        req.outputs.add(name="output")
        return req

    def expect_identity(datatype, shape, array, resp):
        check(resp.model_name == model_name(datatype), "model_name %r" % resp.model_name)
        check([o.name for o in resp.outputs] == ["output"],
              "outputs %r, want ['output']" % [o.name for o in resp.outputs])
        out = resp.outputs[0]
        check(out.datatype == datatype, "output datatype %r, want %r" % (out.datatype, datatype))
        check(list(out.shape) == shape, "output shape %r, want %r" % (list(out.shape), shape))
        check(len(resp.raw_output_contents) == 1,
              "%d raw_output_contents, want 1" % len(resp.raw_output_contents))
        got, want = resp.raw_output_contents[0], raw_bytes(datatype, array)
        if got != want:
            first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                         min(len(got), len(want)))
            raise base.CaseFailure("output bytes differ from the input (%d bytes, want %d; first "
                                   "difference at byte %d)" % (len(got), len(want), first))

    def metadata_case(datatype):
        def run():
            name = model_name(datatype)
            md = client.stub.ModelMetadata(pb.ModelMetadataRequest(name=name),
                                           timeout=base.RPC_TIMEOUT_S)
            ins = [(t.name, t.datatype, list(t.shape)) for t in md.inputs]
            outs = [(t.name, t.datatype, list(t.shape)) for t in md.outputs]
            check(ins == [("input", datatype, [-1, -1])], "%s inputs %r" % (name, ins))
            check(outs == [("output", datatype, [-1, -1])], "%s outputs %r" % (name, outs))
            # ModelConfig names the same type in model_config.proto's enum.
            import model_config_pb2  # generated into the stubs directory by stubs_in
            want = "TYPE_" + ("STRING" if datatype == "BYTES" else datatype)
            cfg = client.stub.ModelConfig(pb.ModelConfigRequest(name=name),
                                          timeout=base.RPC_TIMEOUT_S).config
            got = [model_config_pb2.DataType.Name(t.data_type) for t in list(cfg.input) + list(cfg.output)]
            check(got == [want, want], "%s ModelConfig data types %r, want %r" % (name, got, [want, want]))
        return run

    def infer_case(datatype, shape, typed):
        def run():
            array = sample(datatype, shape, rng)
            resp = client.infer(request(datatype, shape, array, typed))
            expect_identity(datatype, shape, array, resp)
        return run

    def typed_refused(datatype):
        def run():
            req = pb.ModelInferRequest(model_name=model_name(datatype))
            t = req.inputs.add(name="input", datatype=datatype, shape=[1, 3])
            t.contents.fp32_contents.extend([1.0, 2.0, 3.0])
            base.expect_error(client, req, SC.INVALID_ARGUMENT, must_mention="raw_input_contents")
        return run

    for datatype in DATATYPES:
        cases.append(("metadata_%s" % datatype, metadata_case(datatype)))
        for shape in SHAPES:
            dims = "x".join(str(d) for d in shape)
            cases.append(("raw_%s_%s" % (datatype, dims), infer_case(datatype, shape, False)))
            if DATATYPES[datatype][2] is not None:
                cases.append(("typed_%s_%s_%s" % (datatype, DATATYPES[datatype][2], dims),
                              infer_case(datatype, shape, True)))
        if DATATYPES[datatype][2] is None:
            cases.append(("typed_%s_refused_raw_only" % datatype, typed_refused(datatype)))
    return cases


def prepare(_args, tmp):
    repo = os.path.join(tmp, "repo")
    write_repository(repo)
    return repo, None


if __name__ == "__main__":
    sys.exit(base.run_suite(__doc__, "onyx_datatypes_", prepare, build_cases))
