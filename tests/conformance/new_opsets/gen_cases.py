#!/usr/bin/python3
"""Writes the opset 18-23 conformance cases in the ONNX backend-test layout.

    /usr/bin/python3 tests/conformance/new_opsets/gen_cases.py OUT_DIR
    /usr/bin/python3 tests/conformance/new_opsets/gen_cases.py --set-output-shapes OUT_DIR

The first form writes OUT_DIR/<case>/model.onnx and
OUT_DIR/<case>/test_data_set_0/input_N.pb: cases for every operator version of
opsets 18-23 (several per operator where it has attributes, broadcasting or
edge cases), and a few older operators imported at opset 22/23. The expected
outputs are not computed here: record_ort.js runs every case through ONNX
Runtime and writes output_N.pb; the second form then declares the recorded
output shapes in each model. ../regenerate_ort_cases.sh runs the three steps (see
../README.md).

onnx 1.12 knows schemas only up to opset 17, so models are built with
onnx.helper and the opset import set by hand; nothing is checked here (ONNX
Runtime's loader is the check). Every case draws its data from a generator
seeded with its own name, so regenerating writes the same bytes.
"""
import os
import shutil
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE

# The IR version ONNX itself writes for a model at each opset (onnx.helper's VERSION_TABLE).
IR_FOR_OPSET = {17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11}

F32, F64, F16 = np.float32, np.float64, np.float16
I8, I16, I32, I64 = np.int8, np.int16, np.int32, np.int64
U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64
BOOL, STR = np.bool_, object

CASES = {}  # name -> (model, [input arrays])


class C:
    """A node input held as an initializer rather than fed."""

    def __init__(self, name, value):
        self.name, self.value = name, np.asarray(value)


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def elem_type(dtype):
    return TensorProto.STRING if np.dtype(dtype) == np.dtype(object) else NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def tensor(name, value):
    value = np.asarray(value)
    if value.dtype == object:
        t = helper.make_tensor(name, TensorProto.STRING, value.shape, [s.encode() for s in value.flatten()])
        return t
    return numpy_helper.from_array(value, name)


def add_graph(name, opset, nodes, inputs, outputs, initializers=()):
    """inputs: [(name, array)] fed in order; outputs: [(name, dtype)]; shapes are left open."""
    assert name not in CASES, name
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, elem_type(v.dtype), v.shape) for n, v in inputs],
        [helper.make_tensor_value_info(n, elem_type(t), None) for n, t in outputs],
        [tensor(i.name, i.value) for i in initializers])
    model = helper.make_model(graph, producer_name="onyx-gen-cases",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_FOR_OPSET[opset]
    CASES[name] = (model, [np.asarray(v) for _, v in inputs])


def add(name, opset, op, ins, outs, **attrs):
    """One node. ins: (name, array) fed, C(name, array) initializer, None omitted.
    outs: [(name, dtype)] or a dtype for a single output 'y'."""
    if not isinstance(outs, list):
        outs = [("y", outs)]
    inputs = [i for i in ins if isinstance(i, tuple)]
    inits = [i for i in ins if isinstance(i, C)]
    names = ["" if i is None else (i.name if isinstance(i, C) else i[0]) for i in ins]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, [n for n, _ in outs], name=op, **attrs)
    add_graph(name, opset, [node], inputs, outs, inits)


def randn(r, *shape, dtype=F32):
    return r.standard_normal(shape).astype(dtype)


def uniform(r, lo, hi, *shape, dtype=F32):
    return r.uniform(lo, hi, shape).astype(dtype)


def ints(*values, dtype=I64):
    return np.array(values, dtype=dtype)


# ---------------------------------------------------------------- reductions

REDUCE_OPS = ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
              "ReduceProd", "ReduceSumSquare", "ReduceSum"]


def reduce_cases():
    for op in REDUCE_OPS:
        low = op.lower()
        n = f"test_{low}_18"
        r = rng(n)
        x = randn(r, 2, 3, 4)
        if op == "ReduceLogSum":
            x = np.abs(x) + 0.25
        if op == "ReduceProd":
            x = uniform(r, 0.5, 1.5, 2, 3, 4)
        add(f"{n}_axes_keepdims", 18, op, [("x", x), C("axes", ints(1))], F32)
        add(f"{n}_axes_no_keepdims", 18, op, [("x", x), C("axes", ints(0, 2))], F32, keepdims=0)
        add(f"{n}_negative_axes", 18, op, [("x", x), C("axes", ints(-1, -3))], F32)
        add(f"{n}_no_axes", 18, op, [("x", x)], F32)
        add(f"{n}_no_axes_no_keepdims", 18, op, [("x", x)], F32, keepdims=0)
        add(f"{n}_empty_axes", 18, op, [("x", x), C("axes", ints())], F32)
        add(f"{n}_empty_axes_noop", 18, op, [("x", x), C("axes", ints())], F32, noop_with_empty_axes=1)
        add(f"{n}_no_axes_noop", 18, op, [("x", x)], F32, noop_with_empty_axes=1)
        add(f"{n}_fed_axes", 18, op, [("x", x), ("axes", ints(2, 0))], F32, keepdims=0)
        add(f"{n}_at_opset_23", 23, op, [("x", x), C("axes", ints(-2))], F32)
        if op in ("ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
                  "ReduceSumSquare", "ReduceSum"):
            xi = r.integers(-4, 5, (3, 4)).astype(I32)
            if op == "ReduceL2":
                xi = np.array([[3, 4, 0, 0], [1, 2, 2, 0], [6, 8, 0, 0]], dtype=I32)
            add(f"{n}_int32", 18, op, [("x", xi), C("axes", ints(1))], I32)
        if op in ("ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceLogSumExp", "ReduceMean"):
            add(f"{n}_double", 18, op, [("x", x.astype(F64)), C("axes", ints(1))], F64)
        if op in ("ReduceMax", "ReduceMin"):
            add(f"{n}_int8", 18, op, [("x", r.integers(-100, 100, (3, 4)).astype(I8)), C("axes", ints(0))], I8)
            add(f"{n}_uint8", 18, op, [("x", r.integers(0, 255, (3, 4)).astype(U8)), C("axes", ints(1))], U8,
                keepdims=0)
            add(f"{n}_int64", 18, op, [("x", r.integers(-9, 9, (3, 4)).astype(I64)), C("axes", ints(1))], I64)
    # A zero-size reduced axis: ReduceSum gives 0, ReduceProd 1, ReduceMax -inf... only Sum/Prod are well defined.
    add("test_reducesum_18_zero_size_axis", 18, "ReduceSum", [("x", np.zeros((2, 0, 3), F32)), C("axes", ints(1))],
        F32)
    add("test_reduceprod_18_zero_size_axis", 18, "ReduceProd", [("x", np.zeros((2, 0, 3), F32)), C("axes", ints(1))],
        F32, keepdims=0)

    # ReduceMax / ReduceMin 20: bool inputs.
    for op in ("ReduceMax", "ReduceMin"):
        n = f"test_{op.lower()}_20"
        r = rng(n)
        b = r.integers(0, 2, (3, 4)).astype(BOOL)
        b[0, :] = True
        b[1, :] = False
        add(f"{n}_bool_axes", 20, op, [("x", b), C("axes", ints(1))], BOOL)
        add(f"{n}_bool_all", 20, op, [("x", b)], BOOL, keepdims=0)
        add(f"{n}_bool_axis0", 20, op, [("x", b), C("axes", ints(0))], BOOL, keepdims=0)
        add(f"{n}_bool_empty_axes_noop", 20, op, [("x", b), C("axes", ints())], BOOL, noop_with_empty_axes=1)
        add(f"{n}_float", 20, op, [("x", randn(r, 2, 3, 4)), C("axes", ints(-1))], F32)
        add(f"{n}_uint8", 20, op, [("x", r.integers(0, 255, (2, 5)).astype(U8)), C("axes", ints(1))], U8)
        add(f"{n}_bool_at_opset_23", 23, op, [("x", b), C("axes", ints(0, 1))], BOOL)


# ---------------------------------------------------------------- tensor ops

def split_cases():
    n = "test_split_18"
    r = rng(n)
    x6 = randn(r, 2, 6)
    x7 = randn(r, 7)
    outs3 = [("a", F32), ("b", F32), ("c", F32)]
    add(f"{n}_num_outputs_even", 18, "Split", [("x", x6)], outs3, axis=1, num_outputs=3)
    add(f"{n}_num_outputs_uneven", 18, "Split", [("x", x7)], outs3, num_outputs=3)
    add(f"{n}_num_outputs_uneven_4", 18, "Split", [("x", randn(r, 2, 10))], outs3 + [("d", F32)], axis=-1,
        num_outputs=4)
    add(f"{n}_num_outputs_2_axis0", 18, "Split", [("x", randn(r, 5, 2))], [("a", F32), ("b", F32)], num_outputs=2)
    add(f"{n}_split_input", 18, "Split", [("x", x6), C("split", ints(2, 4))], [("a", F32), ("b", F32)], axis=1)
    add(f"{n}_split_fed", 18, "Split", [("x", x6), ("split", ints(1, 2, 3))], outs3, axis=-1)
    add(f"{n}_zero_size_piece", 18, "Split", [("x", x6), C("split", ints(0, 6))], [("a", F32), ("b", F32)], axis=1)
    add(f"{n}_int64", 18, "Split", [("x", np.arange(12, dtype=I64).reshape(4, 3))], [("a", I64), ("b", I64)],
        num_outputs=2)
    add(f"{n}_string", 18, "Split", [("x", np.array(["a", "b", "c", "d"], dtype=object))],
        [("a", STR), ("b", STR)], num_outputs=2)
    add("test_split_18_at_opset_23", 23, "Split", [("x", x6)], outs3, axis=1, num_outputs=3)


def pad_cases():
    n = "test_pad_18"
    r = rng(n)
    x = randn(r, 2, 3, 4)
    add(f"{n}_axes_constant", 18, "Pad", [("x", x), C("pads", ints(1, 2)), C("value", F32(1.5)), C("axes", ints(1))],
        F32)
    add(f"{n}_negative_axes_reflect", 18, "Pad", [("x", x), C("pads", ints(2, 1)), None, C("axes", ints(-1))], F32,
        mode="reflect")
    add(f"{n}_axes_edge", 18, "Pad", [("x", x), C("pads", ints(1, 0, 0, 2)), None, C("axes", ints(0, 2))], F32,
        mode="edge")
    add(f"{n}_axes_unsorted", 18, "Pad", [("x", x), C("pads", ints(0, 1, 2, 0)), None, C("axes", ints(2, 0))], F32)
    add(f"{n}_no_axes", 18, "Pad", [("x", x), C("pads", ints(0, 1, 1, 0, 0, 2))], F32)
    add(f"{n}_negative_pads", 18, "Pad", [("x", x), C("pads", ints(-1, 1, -1, 2)), None, C("axes", ints(1, 2))], F32)
    add(f"{n}_fed_pads_axes", 18, "Pad", [("x", x), ("pads", ints(1, 1)), ("value", np.array(-2.0, F32)),
                                          ("axes", ints(2))], F32)
    add(f"{n}_int32_constant", 18, "Pad", [("x", r.integers(-5, 5, (3, 3)).astype(I32)), C("pads", ints(1, 1)),
                                           C("value", np.array(7, I32)), C("axes", ints(0))], I32)
    n = "test_pad_19"
    r = rng(n)
    x2 = randn(r, 3, 4)
    add(f"{n}_wrap", 19, "Pad", [("x", x2), C("pads", ints(1, 2, 1, 2))], F32, mode="wrap")
    add(f"{n}_wrap_axes", 19, "Pad", [("x", randn(r, 2, 3, 4)), C("pads", ints(2, 3)), None, C("axes", ints(-1))],
        F32, mode="wrap")
    add(f"{n}_wrap_whole_dim", 19, "Pad", [("x", randn(r, 2, 3)), C("pads", ints(0, 3, 0, 2))], F32,
        mode="wrap")
    add(f"{n}_reflect", 19, "Pad", [("x", x2), C("pads", ints(2, 1, 1, 2))], F32, mode="reflect")
    add(f"{n}_edge", 19, "Pad", [("x", x2), C("pads", ints(1, 0, 2, 1))], F32, mode="edge")
    for v in (21, 23):
        add(f"test_pad_{v}_constant", v, "Pad", [("x", x2), C("pads", ints(1, 1, 0, 2)), C("value", F32(0.5))], F32)
        add(f"test_pad_{v}_wrap_axes", v, "Pad", [("x", x2), C("pads", ints(1, 1)), None, C("axes", ints(1))], F32,
            mode="wrap")
    add("test_pad_21_uint8_edge", 21, "Pad",
        [("x", r.integers(0, 255, (2, 3)).astype(U8)), C("pads", ints(1, 1, 1, 1))],
        U8, mode="edge")


def center_crop_pad_cases():
    n = "test_centercroppad_18"
    r = rng(n)
    add(f"{n}_crop", 18, "CenterCropPad", [("x", randn(r, 5, 7)), C("shape", ints(3, 4))], F32)
    add(f"{n}_pad", 18, "CenterCropPad", [("x", randn(r, 3, 4)), C("shape", ints(5, 7))], F32)
    add(f"{n}_crop_and_pad", 18, "CenterCropPad", [("x", randn(r, 4, 4)), C("shape", ints(3, 7))], F32)
    add(f"{n}_odd_difference", 18, "CenterCropPad", [("x", randn(r, 6, 3)), C("shape", ints(3, 6))], F32)
    add(f"{n}_axes_hwc", 18, "CenterCropPad", [("x", randn(r, 5, 6, 3)), C("shape", ints(4, 8))], F32, axes=[0, 1])
    add(f"{n}_negative_axes_chw", 18, "CenterCropPad", [("x", randn(r, 2, 5, 6)), C("shape", ints(3, 3))], F32,
        axes=[-2, -1])
    add(f"{n}_int64", 18, "CenterCropPad", [("x", np.arange(20, dtype=I64).reshape(4, 5)), ("shape", ints(2, 7))],
        I64)


def col2im_cases():
    n = "test_col2im_18"
    r = rng(n)
    add(f"{n}_basic", 18, "Col2Im", [("x", randn(r, 1, 4, 16)), C("image_shape", ints(5, 5)),
                                     C("block_shape", ints(2, 2))], F32)
    add(f"{n}_strides", 18, "Col2Im", [("x", randn(r, 1, 4, 4)), C("image_shape", ints(5, 5)),
                                       C("block_shape", ints(2, 2))], F32, strides=[2, 2])
    add(f"{n}_pads", 18, "Col2Im", [("x", randn(r, 1, 9, 25)), C("image_shape", ints(5, 5)),
                                    C("block_shape", ints(3, 3))], F32, pads=[1, 1, 1, 1])
    add(f"{n}_dilations", 18, "Col2Im", [("x", randn(r, 1, 4, 9)), C("image_shape", ints(5, 5)),
                                         C("block_shape", ints(2, 2))], F32, dilations=[2, 2])
    add(f"{n}_channels_batch", 18, "Col2Im", [("x", randn(r, 2, 8, 6)), C("image_shape", ints(3, 4)),
                                              C("block_shape", ints(2, 2))], F32)
    add(f"{n}_rect_block", 18, "Col2Im", [("x", randn(r, 1, 6, 8)), C("image_shape", ints(3, 6)),
                                          C("block_shape", ints(2, 3)), ], F32, strides=[1, 1], pads=[0, 0, 0, 0])
    add(f"{n}_5d", 18, "Col2Im", [("x", randn(r, 1, 8, 8)), C("image_shape", ints(3, 3, 3)),
                                  C("block_shape", ints(2, 2, 2))], F32)


def scatter_cases():
    n = "test_scatterelements_18"
    r = rng(n)
    data = randn(r, 3, 4)
    idx = np.array([[0, 1, 1], [3, 3, 0], [2, 2, 2]], dtype=I64)
    upd = randn(r, 3, 3)
    for red in ("none", "add", "mul", "max", "min"):
        extra = {} if red == "none" else {"reduction": red}
        i = idx if red != "none" else np.array([[0, 1, 2], [3, 1, 0], [2, 0, 3]], dtype=I64)
        add(f"{n}_{red}", 18, "ScatterElements", [("data", data), ("indices", i), ("updates", upd)], F32, axis=1,
            **extra)
    add(f"{n}_max_negative_indices", 18, "ScatterElements",
        [("data", data), ("indices", np.array([[-1, 0], [-3, -3]], dtype=I64)), ("updates", randn(r, 2, 2))], F32,
        axis=0, reduction="max")
    add(f"{n}_min_int32", 18, "ScatterElements",
        [("data", r.integers(-9, 9, (4,)).astype(I32)), ("indices", np.array([1, 1, 3], dtype=I32)),
         ("updates", np.array([-20, 5, 30], dtype=I32))], I32, reduction="min")
    add(f"{n}_max_at_opset_23", 23, "ScatterElements", [("data", data), ("indices", idx), ("updates", upd)], F32,
        axis=1, reduction="max")
    n = "test_scatternd_18"
    r = rng(n)
    data = randn(r, 4, 3)
    idx = np.array([[1], [3], [1]], dtype=I64)
    upd = randn(r, 3, 3)
    for red in ("add", "mul", "max", "min"):
        add(f"{n}_{red}", 18, "ScatterND", [("data", data), ("indices", idx), ("updates", upd)], F32, reduction=red)
    add(f"{n}_none", 18, "ScatterND", [("data", data), ("indices", np.array([[2], [0]], dtype=I64)),
                                       ("updates", randn(r, 2, 3))], F32)
    add(f"{n}_max_elementwise", 18, "ScatterND",
        [("data", randn(r, 2, 2, 2)), ("indices", np.array([[0, 1, 1], [0, 1, 1], [1, 0, 0]], dtype=I64)),
         ("updates", randn(r, 3))], F32, reduction="max")
    add(f"{n}_min_int64", 18, "ScatterND",
        [("data", np.arange(6, dtype=I64).reshape(2, 3)), ("indices", np.array([[0, 2], [1, 0], [0, 2]], dtype=I64)),
         ("updates", np.array([-5, 3, 10], dtype=I64))], I64, reduction="min")


def bitwise_cases():
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        n = f"test_{op.lower()}_18"
        r = rng(n)
        add(f"{n}_int32_broadcast", 18, op, [("a", r.integers(-1000, 1000, (3, 4)).astype(I32)),
                                             ("b", r.integers(-1000, 1000, (4,)).astype(I32))], I32)
        add(f"{n}_uint8", 18, op, [("a", r.integers(0, 256, (2, 3)).astype(U8)),
                                   ("b", r.integers(0, 256, (2, 3)).astype(U8))], U8)
        add(f"{n}_int64_scalar", 18, op, [("a", r.integers(-2**40, 2**40, (5,)).astype(I64)),
                                          ("b", np.array(0x0F0F0F0F0F, dtype=I64))], I64)
        add(f"{n}_uint64", 18, op, [("a", np.array([0, 2**63, 2**64 - 1, 12345], dtype=U64)),
                                    ("b", np.array([2**64 - 1, 2**63 + 1, 0xFF, 0xF0], dtype=U64))], U64)
        add(f"{n}_int16_broadcast_both", 18, op, [("a", r.integers(-300, 300, (3, 1)).astype(I16)),
                                                  ("b", r.integers(-300, 300, (1, 4)).astype(I16))], I16)
    n = "test_bitwisenot_18"
    r = rng(n)
    add(f"{n}_int32", 18, "BitwiseNot", [("x", r.integers(-1000, 1000, (3, 4)).astype(I32))], I32)
    add(f"{n}_uint8", 18, "BitwiseNot", [("x", np.array([0, 1, 127, 128, 255], dtype=U8))], U8)
    add(f"{n}_int8", 18, "BitwiseNot", [("x", np.array([-128, -1, 0, 1, 127], dtype=I8))], I8)
    add(f"{n}_uint16", 18, "BitwiseNot", [("x", np.array([0, 65535, 4660], dtype=U16))], U16)
    add(f"{n}_uint64", 18, "BitwiseNot", [("x", np.array([0, 2**64 - 1, 2**32], dtype=U64))], U64)


def optional_cases():
    n = "test_optionalhaselement_18"
    r = rng(n)
    add(f"{n}_tensor", 18, "OptionalHasElement", [("x", randn(r, 2, 2))], BOOL)
    opt_type = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    add_graph(f"{n}_empty_optional", 18,
              [helper.make_node("Optional", [], ["o"], type=opt_type),
               helper.make_node("OptionalHasElement", ["o"], ["y"])], [], [("y", BOOL)])
    add_graph(f"{n}_optional_of_tensor", 18,
              [helper.make_node("Optional", ["x"], ["o"]), helper.make_node("OptionalHasElement", ["o"], ["y"])],
              [("x", randn(r, 3))], [("y", BOOL)])
    n = "test_optionalgetelement_18"
    add(f"{n}_tensor", 18, "OptionalGetElement", [("x", randn(r, 2, 3))], F32)
    add_graph(f"{n}_optional_of_tensor", 18,
              [helper.make_node("Optional", ["x"], ["o"]), helper.make_node("OptionalGetElement", ["o"], ["y"])],
              [("x", randn(r, 3))], [("y", F32)])


def cast_cases():
    for v in (19, 21, 23):
        n = f"test_cast_{v}"
        r = rng(n)
        x = np.array([-2.7, -0.5, 0.0, 0.49, 1.5, 2.5, 100.9, -100.2], dtype=F32)
        add(f"{n}_float_to_int32", v, "Cast", [("x", x)], I32, to=TensorProto.INT32)
        add(f"{n}_float_to_float16", v, "Cast", [("x", randn(r, 2, 3) * 100)], F16, to=TensorProto.FLOAT16)
        add(f"{n}_int64_to_float", v, "Cast", [("x", ints(-3, 0, 7, 2**40))], F32, to=TensorProto.FLOAT)
        add(f"{n}_float_to_bool", v, "Cast", [("x", np.array([0.0, -0.0, 1.5, -2.0, np.nan], F32))], BOOL,
            to=TensorProto.BOOL)
        if v == 19:
            add(f"{n}_float16_to_float", v, "Cast", [("x", randn(r, 5).astype(F16))], F32, to=TensorProto.FLOAT)
            add(f"{n}_double_to_float", v, "Cast", [("x", randn(r, 4, dtype=F64) * 1e3)], F32, to=TensorProto.FLOAT)
            add(f"{n}_bool_to_int64", v, "Cast", [("x", np.array([True, False, True]))], I64, to=TensorProto.INT64)
            add(f"{n}_int32_to_uint8_wraps", v, "Cast", [("x", np.array([-1, 256, 300, 255], I32))], U8,
                to=TensorProto.UINT8)
            add(f"{n}_string_to_float", v, "Cast",
                [("x", np.array(["1.5", "-2", "1e3", "0.125"], dtype=object))], F32, to=TensorProto.FLOAT)
            add(f"{n}_int32_to_string", v, "Cast", [("x", np.array([-7, 0, 42], I32))], STR, to=TensorProto.STRING)
            add(f"{n}_float_to_double", v, "Cast", [("x", randn(r, 3))], F64, to=TensorProto.DOUBLE)
            add(f"{n}_saturate_ignored_for_int", v, "Cast", [("x", np.array([1.5, -3.5], F32))], I8,
                to=TensorProto.INT8, saturate=1)
        n = f"test_castlike_{v}"
        add(f"{n}_float_to_int64", v, "CastLike", [("x", x), ("like", np.zeros((1,), I64))], I64)
        add(f"{n}_int32_to_float", v, "CastLike", [("x", np.array([-1, 5, 9], I32)), ("like", np.zeros((), F32))],
            F32)
        if v == 19:
            add(f"{n}_float_to_double", v, "CastLike", [("x", randn(r, 2, 2)), C("like", np.zeros((2,), F64))], F64)
            add(f"{n}_bool_to_float", v, "CastLike", [("x", np.array([True, False])), ("like", np.ones(1, F32))], F32)


def constant_cases():
    for v in (19, 21, 23):
        n = f"test_constant_{v}"
        r = rng(n)
        add(f"{n}_value_tensor", v, "Constant", [], F32, value=numpy_helper.from_array(randn(r, 2, 3)))
        add(f"{n}_value_float", v, "Constant", [], F32, value_float=2.5)
        add(f"{n}_value_ints", v, "Constant", [], I64, value_ints=[3, -1, 4])
        if v == 19:
            add(f"{n}_value_int", v, "Constant", [], I64, value_int=-9)
            add(f"{n}_value_floats", v, "Constant", [], F32, value_floats=[0.5, -1.25])
            add(f"{n}_value_string", v, "Constant", [], STR, value_string="onyx")
            add(f"{n}_value_strings", v, "Constant", [], STR, value_strings=["a", "", "bc"])
    for v in (20, 21, 23):
        n = f"test_constantofshape_{v}"
        add(f"{n}_float", v, "ConstantOfShape", [("shape", ints(2, 3))], F32,
            value=numpy_helper.from_array(np.array([1.5], F32)))
        add(f"{n}_default_zero", v, "ConstantOfShape", [("shape", ints(3))], F32)
        add(f"{n}_int64", v, "ConstantOfShape", [C("shape", ints(1, 2, 2))], I64,
            value=numpy_helper.from_array(np.array([-4], I64)))
        if v == 20:
            add(f"{n}_empty_shape_scalar", v, "ConstantOfShape", [("shape", ints())], I32,
                value=numpy_helper.from_array(np.array([7], I32)))
            add(f"{n}_zero_dim", v, "ConstantOfShape", [("shape", ints(2, 0))], F32)
            add(f"{n}_bool", v, "ConstantOfShape", [("shape", ints(2))], BOOL,
                value=numpy_helper.from_array(np.array([True])))
            add(f"{n}_uint16", v, "ConstantOfShape", [("shape", ints(3))], U16,
                value=numpy_helper.from_array(np.array([65535], U16)))


def shape_op_cases():
    for v in (19, 21, 23):
        r = rng(f"shape_ops_{v}")
        x = randn(r, 2, 3, 4)
        add(f"test_identity_{v}", v, "Identity", [("x", x)], F32)
        add(f"test_identity_{v}_string", v, "Identity", [("x", np.array(["p", "q"], dtype=object))], STR)
        add(f"test_shape_{v}", v, "Shape", [("x", x)], I64)
        add(f"test_shape_{v}_start_end", v, "Shape", [("x", x)], I64, start=1, end=-1)
        add(f"test_shape_{v}_negative_start_clamped", v, "Shape", [("x", x)], I64, start=-10)
        add(f"test_shape_{v}_start_after_end", v, "Shape", [("x", x)], I64, start=2, end=1)
        add(f"test_size_{v}", v, "Size", [("x", x)], I64)
        add(f"test_size_{v}_zero", v, "Size", [("x", np.zeros((3, 0), F32))], I64)
        add(f"test_reshape_{v}_infer_dim", v, "Reshape", [("x", x), C("shape", ints(4, -1))], F32)
        add(f"test_reshape_{v}_copy_dim", v, "Reshape", [("x", x), ("shape", ints(0, 12))], F32)
        add(f"test_reshape_{v}_allowzero", v, "Reshape", [("x", np.zeros((0, 3), F32)), C("shape", ints(3, 0))], F32,
            allowzero=1)
        if v >= 21:
            add(f"test_flatten_{v}", v, "Flatten", [("x", x)], F32, axis=2)
            add(f"test_flatten_{v}_axis0", v, "Flatten", [("x", x)], F32, axis=0)
            add(f"test_flatten_{v}_negative_axis", v, "Flatten", [("x", x)], F32, axis=-1)
            add(f"test_squeeze_{v}", v, "Squeeze", [("x", randn(r, 1, 3, 1, 2)), C("axes", ints(0, -2))], F32)
            add(f"test_squeeze_{v}_no_axes", v, "Squeeze", [("x", randn(r, 1, 3, 1))], F32)
            add(f"test_unsqueeze_{v}", v, "Unsqueeze", [("x", randn(r, 3, 2)), C("axes", ints(0, -1))], F32)
            add(f"test_unsqueeze_{v}_unsorted", v, "Unsqueeze", [("x", randn(r, 3)), ("axes", ints(2, 0))], F32)
            add(f"test_transpose_{v}", v, "Transpose", [("x", x)], F32, perm=[2, 0, 1])
            add(f"test_transpose_{v}_default", v, "Transpose", [("x", x)], F32)
            add(f"test_transpose_{v}_int8", v, "Transpose", [("x", r.integers(-9, 9, (2, 3)).astype(I8))], I8,
                perm=[1, 0])


def control_flow_cases():
    for v in (19, 21, 23):
        r = rng(f"control_{v}")
        then_g = helper.make_graph(
            [helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
            [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
        else_g = helper.make_graph(
            [helper.make_node("Neg", ["x"], ["e"])], "else", [],
            [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
        for cond in (True, False):
            add_graph(f"test_if_{v}_{'then' if cond else 'else'}", v,
                      [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                      [("c", np.array(cond)), ("x", randn(r, 2, 3))], [("y", F32)])
        # Loop: v_out = v_in + float(i); scan output collects v_out.
        body = helper.make_graph(
            [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["v_in", "fi"], ["v_out"]),
             helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Identity", ["v_out"], ["scan"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2]),
             helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2])])
        add_graph(f"test_loop_{v}", v, [helper.make_node("Loop", ["m", "c", "v0"], ["v", "s"], body=body)],
                  [("m", np.array(4, I64)), ("c", np.array(True)), ("v0", randn(r, 2))], [("v", F32), ("s", F32)])
        add_graph(f"test_loop_{v}_zero_trips", v, [helper.make_node("Loop", ["m", "", "v0"], ["v", "s"], body=body)],
                  [("m", np.array(0, I64)), ("v0", randn(r, 2))], [("v", F32), ("s", F32)])
        # Scan: running sum over the rows of x.
        scan_body = helper.make_graph(
            [helper.make_node("Add", ["s_in", "row"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["o"])],
            "scan_body",
            [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [2]),
             helper.make_tensor_value_info("row", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2]),
             helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])])
        add_graph(f"test_scan_{v}", v,
                  [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=scan_body, num_scan_inputs=1)],
                  [("s0", randn(r, 2)), ("x", randn(r, 3, 2))], [("s", F32), ("ys", F32)])
        add_graph(f"test_scan_{v}_reverse_axis1", v,
                  [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=scan_body, num_scan_inputs=1,
                                    scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1])],
                  [("s0", randn(r, 2)), ("x", randn(r, 2, 4))], [("s", F32), ("ys", F32)])


def equal_cases():
    n = "test_equal_19"
    r = rng(n)
    add(f"{n}_string_broadcast", 19, "Equal",
        [("a", np.array([["x", "y", ""], ["y", "zz", "x"]], dtype=object)),
         ("b", np.array(["x", "zz", ""], dtype=object))], BOOL)
    add(f"{n}_string_scalar", 19, "Equal",
        [("a", np.array(["on", "yx", "onyx"], dtype=object)), ("b", np.array("onyx", dtype=object))], BOOL)
    a = r.integers(0, 3, (2, 3)).astype(F32)
    add(f"{n}_float_broadcast", 19, "Equal", [("a", a), ("b", np.array([0, 1, 2], F32))], BOOL)
    add(f"{n}_int64", 19, "Equal", [("a", ints(1, 2, 3)), ("b", ints(3, 2, 1))], BOOL)
    add(f"{n}_bool", 19, "Equal", [("a", np.array([True, False])), ("b", np.array([[True], [False]]))], BOOL)


# ---------------------------------------------------------------- NN ops

def pool_cases():
    n = "test_averagepool_19"
    r = rng(n)
    x = randn(r, 1, 2, 6, 6)
    add(f"{n}_dilations", 19, "AveragePool", [("x", x)], F32, kernel_shape=[2, 2], dilations=[2, 2])
    add(f"{n}_dilations_strides", 19, "AveragePool", [("x", x)], F32, kernel_shape=[2, 2], dilations=[2, 1],
        strides=[2, 2])
    add(f"{n}_dilations_pads_count_include_pad", 19, "AveragePool", [("x", x)], F32, kernel_shape=[3, 3],
        dilations=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    add(f"{n}_dilations_pads", 19, "AveragePool", [("x", x)], F32, kernel_shape=[3, 3], dilations=[2, 2],
        pads=[1, 1, 1, 1])
    add(f"{n}_dilations_ceil", 19, "AveragePool", [("x", randn(r, 1, 1, 7, 7))], F32, kernel_shape=[2, 2],
        dilations=[2, 2], strides=[2, 2], ceil_mode=1)
    add(f"{n}_1d_dilations", 19, "AveragePool", [("x", randn(r, 1, 2, 9))], F32, kernel_shape=[3], dilations=[3])
    add(f"{n}_3d", 19, "AveragePool", [("x", randn(r, 1, 1, 4, 4, 4))], F32, kernel_shape=[2, 2, 2],
        dilations=[1, 2, 1])
    add(f"{n}_same_upper", 19, "AveragePool", [("x", x)], F32, kernel_shape=[3, 3], auto_pad="SAME_UPPER",
        strides=[2, 2])
    add("test_averagepool_22_pads", 22, "AveragePool", [("x", x)], F32, kernel_shape=[3, 3], pads=[1, 0, 1, 0],
        strides=[2, 1])
    add("test_averagepool_22_dilations_ceil", 22, "AveragePool", [("x", x)], F32, kernel_shape=[2, 2],
        dilations=[2, 2], strides=[3, 3], ceil_mode=1)
    n = "test_lppool_18"
    r = rng(n)
    x = randn(r, 1, 2, 5, 5)
    add(f"{n}_p2", 18, "LpPool", [("x", x)], F32, kernel_shape=[2, 2])
    add(f"{n}_p1_strides_pads", 18, "LpPool", [("x", x)], F32, kernel_shape=[3, 3], p=1, strides=[2, 2],
        pads=[1, 1, 1, 1])
    add(f"{n}_dilations", 18, "LpPool", [("x", x)], F32, kernel_shape=[2, 2], dilations=[2, 2])
    add(f"{n}_ceil_mode", 18, "LpPool", [("x", x)], F32, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    add(f"{n}_p3_1d", 18, "LpPool", [("x", randn(r, 1, 1, 6))], F32, kernel_shape=[3], p=3)
    add(f"{n}_same_lower", 18, "LpPool", [("x", x)], F32, kernel_shape=[2, 2], auto_pad="SAME_LOWER")
    add("test_lppool_22", 22, "LpPool", [("x", x)], F32, kernel_shape=[3, 3], dilations=[1, 2])
    n = "test_maxpool_22"
    r = rng(n)
    x = randn(r, 1, 2, 5, 5)
    add(f"{n}", 22, "MaxPool", [("x", x)], F32, kernel_shape=[2, 2])
    add(f"{n}_indices", 22, "MaxPool", [("x", x)], [("y", F32), ("i", I64)], kernel_shape=[2, 2], strides=[2, 2],
        ceil_mode=1)
    add(f"{n}_dilations_pads", 22, "MaxPool", [("x", x)], F32, kernel_shape=[2, 2], dilations=[2, 2],
        pads=[1, 1, 1, 1])
    add(f"{n}_indices_column_major", 22, "MaxPool", [("x", x)], [("y", F32), ("i", I64)], kernel_shape=[3, 3],
        storage_order=1)
    add(f"{n}_uint8", 22, "MaxPool", [("x", r.integers(0, 255, (1, 1, 4, 4)).astype(U8))], U8, kernel_shape=[2, 2])
    add("test_globalaveragepool_22", 22, "GlobalAveragePool", [("x", randn(r, 2, 3, 4, 5))], F32)
    add("test_globalmaxpool_22", 22, "GlobalMaxPool", [("x", randn(r, 2, 3, 4, 5))], F32)
    add("test_globallppool_22", 22, "GlobalLpPool", [("x", randn(r, 1, 3, 4, 4))], F32)
    add("test_globallppool_22_p3", 22, "GlobalLpPool", [("x", randn(r, 1, 2, 5))], F32, p=3)
    # MaxUnpool: indices from a 2x2 max pool of a 4x4 image.
    add("test_maxunpool_22", 22, "MaxUnpool", [("x", randn(r, 1, 1, 2, 2)), ("i", ints(5, 7, 8, 14).reshape(
        1, 1, 2, 2))], F32, kernel_shape=[2, 2], strides=[2, 2])
    add("test_maxunpool_22_output_shape", 22, "MaxUnpool",
        [("x", randn(r, 1, 1, 2, 2)), ("i", ints(5, 7, 13, 15).reshape(1, 1, 2, 2)), C("shape", ints(1, 1, 5, 5))],
        F32, kernel_shape=[2, 2], strides=[2, 2])
    add("test_maxroipool_22", 22, "MaxRoiPool",
        [("x", randn(r, 1, 2, 6, 6)), ("rois", np.array([[0, 0, 0, 3, 3], [0, 1, 2, 5, 5]], F32))], F32,
        pooled_shape=[2, 2])
    add("test_maxroipool_22_spatial_scale", 22, "MaxRoiPool",
        [("x", randn(r, 1, 1, 6, 6)), ("rois", np.array([[0, 0, 0, 7, 9]], F32))], F32, pooled_shape=[3, 2],
        spatial_scale=0.5)


def conv_cases():
    n = "test_conv_22"
    r = rng(n)
    add(f"{n}", 22, "Conv", [("x", randn(r, 1, 2, 5, 5)), ("w", randn(r, 3, 2, 3, 3))], F32)
    add(f"{n}_bias_pads_strides", 22, "Conv", [("x", randn(r, 1, 2, 5, 5)), ("w", randn(r, 4, 2, 3, 3)),
                                               ("b", randn(r, 4))], F32, pads=[1, 1, 1, 1], strides=[2, 2])
    add(f"{n}_group_dilations", 22, "Conv", [("x", randn(r, 1, 4, 6, 6)), ("w", randn(r, 4, 2, 2, 2))], F32, group=2,
        dilations=[2, 2])
    add(f"{n}_depthwise_same_upper", 22, "Conv", [("x", randn(r, 1, 3, 5, 5)), C("w", randn(r, 3, 1, 3, 3))], F32,
        group=3, auto_pad="SAME_UPPER")
    add(f"{n}_1d", 22, "Conv", [("x", randn(r, 2, 2, 7)), ("w", randn(r, 3, 2, 3))], F32, strides=[2])
    add(f"{n}_3d", 22, "Conv", [("x", randn(r, 1, 1, 4, 4, 4)), ("w", randn(r, 2, 1, 2, 2, 2))], F32)
    n = "test_convtranspose_22"
    add(f"{n}", 22, "ConvTranspose", [("x", randn(r, 1, 2, 3, 3)), ("w", randn(r, 2, 3, 3, 3))], F32)
    add(f"{n}_strides_output_padding", 22, "ConvTranspose",
        [("x", randn(r, 1, 2, 3, 3)), ("w", randn(r, 2, 2, 3, 3)), ("b", randn(r, 2))], F32, strides=[2, 2],
        output_padding=[1, 1])
    add(f"{n}_pads_group", 22, "ConvTranspose", [("x", randn(r, 1, 4, 3, 3)), ("w", randn(r, 4, 1, 3, 3))], F32,
        pads=[1, 1, 1, 1], group=2, strides=[2, 2])
    add(f"{n}_output_shape", 22, "ConvTranspose", [("x", randn(r, 1, 1, 3, 3)), ("w", randn(r, 1, 2, 3, 3))], F32,
        strides=[3, 2], output_shape=[10, 8])
    add(f"{n}_dilations_1d", 22, "ConvTranspose", [("x", randn(r, 1, 1, 4)), ("w", randn(r, 1, 1, 3))], F32,
        dilations=[2])
    for v in (19, 22):
        n = f"test_deformconv_{v}"
        r = rng(n)
        x = randn(r, 1, 2, 4, 4)
        w = randn(r, 3, 2, 2, 2)
        add(f"{n}_zero_offset", v, "DeformConv", [("x", x), ("w", w), ("offset", np.zeros((1, 8, 3, 3), F32))], F32)
        add(f"{n}_offset", v, "DeformConv", [("x", x), ("w", w), ("offset", uniform(r, -1.5, 1.5, 1, 8, 3, 3))], F32)
        if v == 19:
            add(f"{n}_bias_mask", v, "DeformConv",
                [("x", x), ("w", w), ("offset", uniform(r, -1, 1, 1, 8, 3, 3)), ("b", randn(r, 3)),
                 ("mask", uniform(r, 0, 1, 1, 4, 3, 3))], F32)
            add(f"{n}_pads_strides", v, "DeformConv",
                [("x", randn(r, 1, 1, 5, 5)), ("w", randn(r, 2, 1, 3, 3)), ("offset", uniform(r, -2, 2, 1, 18, 3, 3))],
                F32, pads=[1, 1, 1, 1], strides=[2, 2])
            add(f"{n}_offset_group_2", v, "DeformConv",
                [("x", randn(r, 1, 4, 3, 3)), ("w", randn(r, 2, 4, 2, 2)), ("offset", uniform(r, -1, 1, 1, 16, 2, 2))],
                F32, offset_group=2)
            add(f"{n}_group_dilations", v, "DeformConv",
                [("x", randn(r, 2, 4, 5, 5)), ("w", randn(r, 2, 2, 2, 2)), ("offset", uniform(r, -1, 1, 2, 8, 3, 3)),
                 None, ("mask", uniform(r, 0, 1, 2, 4, 3, 3))], F32, group=2, dilations=[2, 2])


def norm_cases():
    n = "test_groupnormalization_18"
    r = rng(n)
    x = randn(r, 2, 4, 3, 3)
    add(f"{n}_2_groups", 18, "GroupNormalization", [("x", x), ("scale", randn(r, 2)), ("bias", randn(r, 2))], F32,
        num_groups=2)
    add(f"{n}_groups_eq_channels", 18, "GroupNormalization", [("x", x), C("scale", randn(r, 4)),
                                                              C("bias", randn(r, 4))], F32, num_groups=4)
    add(f"{n}_1_group_epsilon", 18, "GroupNormalization", [("x", randn(r, 1, 3, 5)), ("scale", randn(r, 1)),
                                                           ("bias", randn(r, 1))], F32, num_groups=1, epsilon=1e-2)
    n = "test_groupnormalization_21"
    add(f"{n}_per_channel_scale", 21, "GroupNormalization", [("x", x), ("scale", randn(r, 4)), ("bias", randn(r, 4))],
        F32, num_groups=2)
    add(f"{n}_1_group", 21, "GroupNormalization", [("x", randn(r, 1, 3, 5)), ("scale", randn(r, 3)),
                                                   ("bias", randn(r, 3))], F32, num_groups=1)
    add(f"{n}_stash_type_float16_input", 21, "GroupNormalization",
        [("x", randn(r, 1, 4, 4).astype(F16)), ("scale", randn(r, 4).astype(F16)), ("bias", randn(r, 4).astype(F16))],
        F16, num_groups=2)
    add(f"{n}_3d_epsilon", 21, "GroupNormalization", [("x", randn(r, 1, 6, 2, 2, 2)), ("scale", randn(r, 6)),
                                                      ("bias", randn(r, 6))], F32, num_groups=3, epsilon=0.1)
    add("test_instancenormalization_22", 22, "InstanceNormalization",
        [("x", randn(r, 2, 3, 4)), ("s", randn(r, 3)), ("b", randn(r, 3))], F32)
    add("test_instancenormalization_22_4d_epsilon", 22, "InstanceNormalization",
        [("x", randn(r, 1, 2, 3, 3)), ("s", randn(r, 2)), ("b", randn(r, 2))], F32, epsilon=0.5)
    add("test_lpnormalization_22", 22, "LpNormalization", [("x", randn(r, 3, 4))], F32)
    add("test_lpnormalization_22_p1_axis0", 22, "LpNormalization", [("x", randn(r, 3, 4))], F32, p=1, axis=0)
    n = "test_rmsnormalization_23"
    r = rng(n)
    add(f"{n}", 23, "RMSNormalization", [("x", randn(r, 2, 3, 4)), ("scale", randn(r, 4))], F32)
    add(f"{n}_axis1", 23, "RMSNormalization", [("x", randn(r, 2, 3, 4)), ("scale", randn(r, 3, 4))], F32, axis=1)
    add(f"{n}_negative_axis_broadcast_scale", 23, "RMSNormalization",
        [("x", randn(r, 2, 3, 4)), C("scale", randn(r, 1, 4))], F32, axis=-2)
    add(f"{n}_epsilon", 23, "RMSNormalization", [("x", randn(r, 3, 5) * 0.01), ("scale", randn(r, 5))], F32,
        epsilon=1e-3)
    add(f"{n}_axis0", 23, "RMSNormalization", [("x", randn(r, 2, 3)), ("scale", randn(r, 2, 3))], F32, axis=0)
    add(f"{n}_float16", 23, "RMSNormalization", [("x", randn(r, 2, 8).astype(F16)), ("scale", randn(r, 8).astype(F16))],
        F16)
    add(f"{n}_double_stash", 23, "RMSNormalization",
        [("x", randn(r, 2, 4, dtype=F64)), ("scale", randn(r, 4, dtype=F64))],
        F64, stash_type=TensorProto.DOUBLE)


def resize_cases():
    n = "test_resize_18"
    r = rng(n)
    img = randn(r, 1, 1, 8, 8)
    small = randn(r, 1, 2, 3, 4)
    sc = lambda *v: C("scales", np.array(v, F32))  # noqa: E731
    sz = lambda *v: C("sizes", ints(*v))  # noqa: E731
    add(f"{n}_antialias_linear_downscale", 18, "Resize", [("x", img), None, sc(1, 1, 0.5, 0.5)], F32, mode="linear",
        antialias=1)
    add(f"{n}_antialias_linear_sizes", 18, "Resize", [("x", img), None, None, sz(1, 1, 3, 5)], F32, mode="linear",
        antialias=1)
    add(f"{n}_antialias_cubic_downscale", 18, "Resize", [("x", img), None, sc(1, 1, 0.6, 0.6)], F32, mode="cubic",
        antialias=1)
    add(f"{n}_antialias_upscale_is_plain", 18, "Resize", [("x", small), None, sc(1, 1, 2, 1.5)], F32, mode="linear",
        antialias=1)
    add(f"{n}_axes_scales", 18, "Resize", [("x", small), None, sc(2.0, 0.5)], F32, mode="linear", axes=[2, 3])
    add(f"{n}_axes_sizes_nearest", 18, "Resize", [("x", small), None, None, sz(7)], F32, mode="nearest", axes=[-1])
    add(f"{n}_axes_reordered", 18, "Resize", [("x", small), None, None, sz(3, 6)], F32, mode="nearest", axes=[3, 2])
    add(f"{n}_not_larger", 18, "Resize", [("x", small), None, None, sz(6, 6)], F32, mode="linear", axes=[2, 3],
        keep_aspect_ratio_policy="not_larger")
    add(f"{n}_not_smaller", 18, "Resize", [("x", small), None, None, sz(6, 6)], F32, mode="linear", axes=[2, 3],
        keep_aspect_ratio_policy="not_smaller")
    add(f"{n}_not_larger_4d_sizes", 18, "Resize", [("x", small), None, None, sz(1, 2, 5, 9)], F32, mode="nearest",
        keep_aspect_ratio_policy="not_larger")
    add(f"{n}_linear_half_pixel", 18, "Resize", [("x", small), None, sc(1, 1, 1.5, 2)], F32, mode="linear")
    add(f"{n}_cubic_exclude_outside", 18, "Resize", [("x", small), None, sc(1, 1, 2, 2)], F32, mode="cubic",
        cubic_coeff_a=-0.5, exclude_outside=1)
    add(f"{n}_nearest_floor_align_corners", 18, "Resize", [("x", small), None, sc(1, 1, 2, 2)], F32, mode="nearest",
        coordinate_transformation_mode="align_corners", nearest_mode="floor")
    add(f"{n}_crop_and_resize_axes", 18, "Resize",
        [("x", small), C("roi", np.array([0.2, 0.1, 0.8, 0.9], F32)), None, sz(4, 4)], F32, mode="linear",
        axes=[2, 3], coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0)
    add(f"{n}_fed_scales", 18, "Resize", [("x", small), ("roi", np.zeros((0,), F32)),
                                          ("scales", np.array([1, 1, 0.5, 1.75], F32))], F32, mode="linear")
    add(f"{n}_uint8_linear", 18, "Resize", [("x", r.integers(0, 255, (1, 1, 3, 3)).astype(U8)), None,
                                            sc(1, 1, 2, 2)], U8, mode="linear")
    n = "test_resize_19"
    add(f"{n}_half_pixel_symmetric_linear_up", 19, "Resize", [("x", small), None, sc(1, 1, 2.0, 1.5)], F32,
        mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    add(f"{n}_half_pixel_symmetric_linear_down", 19, "Resize", [("x", img), None, None, sz(1, 1, 5, 3)], F32,
        mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    add(f"{n}_half_pixel_symmetric_nearest", 19, "Resize", [("x", small), None, sc(1, 1, 1.7, 0.8)], F32,
        mode="nearest", coordinate_transformation_mode="half_pixel_symmetric")
    add(f"{n}_half_pixel_symmetric_cubic", 19, "Resize", [("x", small), None, None, sz(5, 7)], F32, mode="cubic",
        axes=[2, 3], coordinate_transformation_mode="half_pixel_symmetric")
    add(f"{n}_antialias_linear", 19, "Resize", [("x", img), None, sc(1, 1, 0.4, 0.75)], F32, mode="linear",
        antialias=1)
    add(f"{n}_nearest_round_prefer_ceil", 19, "Resize", [("x", small), None, sc(1, 1, 2, 3)], F32, mode="nearest",
        nearest_mode="round_prefer_ceil", coordinate_transformation_mode="asymmetric")
    add(f"{n}_at_opset_23", 23, "Resize", [("x", small), None, sc(1, 1, 2, 2)], F32, mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel")


def gridsample_cases():
    n = "test_gridsample_20"
    r = rng(n)
    x = randn(r, 1, 2, 3, 4)
    grid = uniform(r, -1.2, 1.2, 1, 3, 5, 2)
    for mode in ("linear", "nearest", "cubic"):
        for pad in ("zeros", "border", "reflection"):
            add(f"{n}_{mode}_{pad}", 20, "GridSample", [("x", x), ("grid", grid)], F32, mode=mode, padding_mode=pad)
        add(f"{n}_{mode}_align_corners", 20, "GridSample", [("x", x), ("grid", grid)], F32, mode=mode,
            align_corners=1)
    add(f"{n}_reflection_align_corners_far", 20, "GridSample",
        [("x", x), ("grid", uniform(r, -3.5, 3.5, 1, 2, 4, 2))], F32, mode="linear", padding_mode="reflection",
        align_corners=1)
    add(f"{n}_default_attributes_batch2", 20, "GridSample",
        [("x", randn(r, 2, 1, 4, 4)), ("grid", uniform(r, -1, 1, 2, 2, 3, 2))], F32)
    x5 = randn(r, 1, 2, 3, 3, 4)
    grid5 = uniform(r, -1.1, 1.1, 1, 2, 3, 2, 3)
    for mode in ("linear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            add(f"{n}_5d_{mode}_{pad}", 20, "GridSample", [("x", x5), ("grid", grid5)], F32, mode=mode,
                padding_mode=pad)
        add(f"{n}_5d_{mode}_align_corners", 20, "GridSample", [("x", x5), ("grid", grid5)], F32, mode=mode,
            align_corners=1)
    add("test_gridsample_22_linear", 22, "GridSample", [("x", x), ("grid", grid)], F32, mode="linear")
    add("test_gridsample_22_cubic_border", 22, "GridSample", [("x", x), ("grid", grid)], F32, mode="cubic",
        padding_mode="border")


def affine_grid_cases():
    n = "test_affinegrid_20"
    r = rng(n)
    theta = (np.array([[1, 0, 0], [0, 1, 0]], F32) + 0.2 * randn(r, 2, 2, 3)).astype(F32)
    for ac in (0, 1):
        add(f"{n}_2d_align_corners_{ac}", 20, "AffineGrid", [("theta", theta), C("size", ints(2, 1, 3, 4))], F32,
            align_corners=ac)
    theta3 = (np.eye(3, 4, dtype=F32) + 0.2 * randn(r, 1, 3, 4)).astype(F32)
    for ac in (0, 1):
        add(f"{n}_3d_align_corners_{ac}", 20, "AffineGrid", [("theta", theta3), C("size", ints(1, 1, 2, 3, 4))], F32,
            align_corners=ac)
    add(f"{n}_fed_size_single_pixel", 20, "AffineGrid", [("theta", theta[:1]), ("size", ints(1, 3, 1, 2))], F32)
    add(f"{n}_double", 20, "AffineGrid", [("theta", theta.astype(F64)), C("size", ints(2, 1, 2, 2))], F64,
        align_corners=1)


def dft_cases():
    n = "test_dft_20"
    r = rng(n)
    real8 = randn(r, 1, 8, 1)
    add(f"{n}_real", 20, "DFT", [("x", real8)], F32)
    add(f"{n}_real_onesided", 20, "DFT", [("x", real8)], F32, onesided=1)
    add(f"{n}_complex_inverse", 20, "DFT", [("x", randn(r, 2, 8, 2))], F32, inverse=1)
    add(f"{n}_complex_batch", 20, "DFT", [("x", randn(r, 3, 4, 2))], F32)
    add(f"{n}_dft_length_pad", 20, "DFT", [("x", real8), C("dft_length", np.array(10, I64))], F32)
    add(f"{n}_dft_length_truncate", 20, "DFT", [("x", real8), ("dft_length", np.array(6, I64))], F32)
    add(f"{n}_axis_input", 20, "DFT", [("x", randn(r, 2, 3, 5, 1)), None, C("axis", np.array(2, I64))], F32)
    add(f"{n}_axis_first_negative", 20, "DFT", [("x", randn(r, 4, 3, 2)), None, ("axis", np.array(-3, I64))], F32)
    add(f"{n}_non_power_of_two", 20, "DFT", [("x", randn(r, 1, 7, 2))], F32)
    add(f"{n}_inverse_onesided_length", 20, "DFT",
        [("x", randn(r, 1, 6, 2)), C("dft_length", np.array(6, I64)), C("axis", np.array(1, I64))], F32, inverse=1)
    add(f"{n}_double", 20, "DFT", [("x", randn(r, 1, 5, 1, dtype=F64))], F64)
    add(f"{n}_real_onesided_odd", 20, "DFT", [("x", randn(r, 2, 7, 1))], F32, onesided=1)


def activation_cases():
    n = "test_gelu_20"
    r = rng(n)
    x = np.concatenate([np.linspace(-6, 6, 13), randn(r, 7)]).astype(F32)
    add(f"{n}_default", 20, "Gelu", [("x", x)], F32)
    add(f"{n}_tanh", 20, "Gelu", [("x", x)], F32, approximate="tanh")
    add(f"{n}_none_explicit_2d", 20, "Gelu", [("x", randn(r, 3, 4))], F32, approximate="none")
    add(f"{n}_double", 20, "Gelu", [("x", x.astype(F64))], F64)
    add(f"{n}_tanh_double", 20, "Gelu", [("x", x.astype(F64))], F64, approximate="tanh")
    add(f"{n}_at_opset_23", 23, "Gelu", [("x", x)], F32, approximate="tanh")
    add(f"{n}_float16", 20, "Gelu", [("x", x.astype(F16))], F16)
    add(f"{n}_tanh_float16", 20, "Gelu", [("x", x.astype(F16))], F16, approximate="tanh")
    n = "test_mish_18"
    add(f"{n}", 18, "Mish", [("x", x)], F32)
    add(f"{n}_large", 18, "Mish", [("x", np.array([-30, -10, 10, 30, 80], F32))], F32)
    add("test_mish_22", 22, "Mish", [("x", randn(r, 2, 3))], F32)
    add("test_mish_22_double", 22, "Mish", [("x", randn(r, 5, dtype=F64))], F64)
    r = rng("opset22_unary")
    x = randn(r, 3, 4)
    unit = uniform(r, -0.95, 0.95, 3, 4)
    unary = [("ThresholdedRelu", x, {"alpha": 0.3}), ("Selu", x, {}), ("Selu", x, {"alpha": 2.0, "gamma": 0.5}),
             ("Elu", x, {}), ("Elu", x, {"alpha": 0.4}), ("HardSigmoid", x, {}),
             ("HardSigmoid", x, {"alpha": 0.5, "beta": 0.25}), ("HardSwish", x * 3, {}), ("Softsign", x, {}),
             ("Softplus", x * 5, {}), ("Sin", x, {}), ("Cos", x, {}), ("Tan", unit, {}), ("Asin", unit, {}),
             ("Acos", unit, {}), ("Atan", x, {}), ("Sinh", x, {}), ("Cosh", x, {}), ("Asinh", x, {}),
             ("Acosh", np.abs(x) + 1, {}), ("Atanh", unit, {})]
    seen = {}
    for op, v, attrs in unary:
        k = seen.get(op, 0)
        seen[op] = k + 1
        suffix = "" if k == 0 else "_attributes"
        add(f"test_{op.lower()}_22{suffix}", 22, op, [("x", v)], F32, **attrs)
    add("test_sin_22_double", 22, "Sin", [("x", randn(r, 4, dtype=F64))], F64)
    add("test_round_22_half_to_even", 22, "Round",
        [("x", np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51, 3.7], F32))], F32)
    add("test_round_22_double", 22, "Round", [("x", np.array([2.5, -3.5, 1e10 + 0.5], F64))], F64)
    add("test_isinf_20", 20, "IsInf", [("x", np.array([-np.inf, -1.0, 0.0, np.inf, np.nan, 3e38], F32))], BOOL)
    add("test_isinf_20_positive_only", 20, "IsInf", [("x", np.array([-np.inf, np.inf, 2.0], F32))], BOOL,
        detect_negative=0)
    add("test_isinf_20_negative_only", 20, "IsInf", [("x", np.array([-np.inf, np.inf, 2.0], F32))], BOOL,
        detect_positive=0)
    add("test_isinf_20_float16", 20, "IsInf", [("x", np.array([-np.inf, 65504, np.inf, np.nan], F16))], BOOL)
    add("test_isinf_20_double", 20, "IsInf", [("x", np.array([np.inf, 1e308, -np.inf], F64))], BOOL)
    add("test_isnan_20", 20, "IsNaN", [("x", np.array([np.nan, -np.nan, 0.0, np.inf, 1.0], F32))], BOOL)
    add("test_isnan_20_float16", 20, "IsNaN", [("x", np.array([np.nan, 1.0, -np.inf], F16))], BOOL)
    add("test_isnan_20_double", 20, "IsNaN", [("x", np.array([[np.nan, 2.0], [0.0, np.nan]], F64))], BOOL)


def misc_22_cases():
    r = rng("opset22_misc")
    add("test_eyelike_22", 22, "EyeLike", [("x", np.zeros((3, 4), F32))], F32)
    add("test_eyelike_22_k_dtype", 22, "EyeLike", [("x", np.zeros((4, 3), F32))], I64, k=-1, dtype=TensorProto.INT64)
    add("test_eyelike_22_int32", 22, "EyeLike", [("x", np.zeros((3, 3), I32))], I32, k=2)
    add("test_det_22", 22, "Det", [("x", randn(r, 3, 3))], F32)
    add("test_det_22_batch", 22, "Det", [("x", randn(r, 2, 2, 2))], F32)
    add("test_det_22_singular", 22, "Det", [("x", np.array([[1, 2], [2, 4]], F32))], F32)
    logp = np.log(np.abs(randn(r, 2, 3, 2)) + 0.1).astype(F32)
    target = np.array([[0, 2], [1, 1]], I64)
    for red in ("mean", "sum", "none"):
        add(f"test_negativeloglikelihoodloss_22_{red}", 22, "NegativeLogLikelihoodLoss",
            [("x", logp), ("t", target)], F32, reduction=red)
    add("test_negativeloglikelihoodloss_22_weight_ignore_index", 22, "NegativeLogLikelihoodLoss",
        [("x", logp), ("t", target), ("w", np.array([0.2, 0.5, 1.3], F32))], F32, ignore_index=1)
    add("test_negativeloglikelihoodloss_22_2d_weight", 22, "NegativeLogLikelihoodLoss",
        [("x", randn(r, 3, 4)), ("t", np.array([3, 0, 1], I64)), ("w", np.array([1, 2, 3, 4], F32))], F32,
        reduction="sum")
    add("test_dropout_22_inference", 22, "Dropout", [("x", randn(r, 3, 4))], F32)
    add("test_dropout_22_mask", 22, "Dropout", [("x", randn(r, 2, 3)), C("ratio", np.array(0.5, F32))],
        [("y", F32), ("mask", BOOL)])
    add("test_dropout_22_training_false", 22, "Dropout",
        [("x", randn(r, 2, 3)), ("ratio", np.array(0.7, F32)), ("training_mode", np.array(False))],
        [("y", F32), ("mask", BOOL)])
    add("test_roialign_22_avg", 22, "RoiAlign",
        [("x", randn(r, 2, 2, 5, 5)), ("rois", np.array([[0, 0, 3, 3], [0.5, 1, 4.5, 4]], F32)),
         ("b", ints(0, 1))], F32, output_height=2, output_width=3, sampling_ratio=2)
    add("test_roialign_22_max_output_half_pixel", 22, "RoiAlign",
        [("x", randn(r, 1, 1, 6, 6)), ("rois", np.array([[0.5, 0.5, 4.5, 5]], F32)), ("b", ints(0))], F32,
        mode="max", output_height=3, output_width=3, sampling_ratio=1, spatial_scale=0.9)
    add("test_roialign_22_output_half_pixel_adaptive", 22, "RoiAlign",
        [("x", randn(r, 1, 2, 4, 4)), ("rois", np.array([[0, 0, 2.5, 3.5]], F32)), ("b", ints(0))], F32,
        coordinate_transformation_mode="output_half_pixel", output_height=2, output_width=2)
    # Deterministic draws of the random generators: zero spread, or a certain outcome.
    add("test_randomnormal_22_zero_scale", 22, "RandomNormal", [], F32, shape=[2, 3], mean=1.5, scale=0.0)
    add("test_randomuniform_22_empty_range", 22, "RandomUniform", [], F32, shape=[3], low=-2.0, high=-2.0)
    add("test_randomnormallike_22_zero_scale", 22, "RandomNormalLike", [("x", np.zeros((2, 2), F32))], F32,
        mean=-0.5, scale=0.0)
    add("test_randomuniformlike_22_empty_range", 22, "RandomUniformLike", [("x", np.zeros((4,), F32))], F32,
        low=3.0, high=3.0)
    add("test_randomuniformlike_22_dtype", 22, "RandomUniformLike", [("x", np.zeros((2,), F32))], F64, low=1.0,
        high=1.0, dtype=TensorProto.DOUBLE)
    add("test_deterministic_bernoulli_22", 22, "Bernoulli", [("p", np.array([[0, 1, 1], [0, 0, 1]], F32))], F32)
    add("test_deterministic_bernoulli_22_dtype", 22, "Bernoulli", [("p", np.array([1, 0, 1, 1], F32))], BOOL,
        dtype=TensorProto.BOOL)
    add("test_deterministic_multinomial_22", 22, "Multinomial",
        [("x", np.array([[0, -np.inf, -np.inf], [-np.inf, -np.inf, 0]], F32))], I32, sample_size=4)
    add("test_deterministic_multinomial_22_int64", 22, "Multinomial", [("x", np.array([[-np.inf, 2.0]], F32))], I64,
        sample_size=3, dtype=TensorProto.INT64)


def rnn_cases():
    r = rng("opset22_rnn")
    seq, batch, inp, hid = 3, 2, 2, 3
    x = randn(r, seq, batch, inp)
    add("test_rnn_22", 22, "RNN", [("x", x), ("w", randn(r, 1, hid, inp)), ("r", randn(r, 1, hid, hid) * 0.5),
                                   ("b", randn(r, 1, 2 * hid))], [("y", F32), ("y_h", F32)], hidden_size=hid)
    add("test_rnn_22_bidirectional_initial_h", 22, "RNN",
        [("x", x), ("w", randn(r, 2, hid, inp)), ("r", randn(r, 2, hid, hid) * 0.5), None, None,
         ("h0", randn(r, 2, batch, hid))], [("y", F32), ("y_h", F32)], hidden_size=hid, direction="bidirectional")
    add("test_gru_22", 22, "GRU", [("x", x), ("w", randn(r, 1, 3 * hid, inp)), ("r", randn(r, 1, 3 * hid, hid) * 0.5),
                                   ("b", randn(r, 1, 6 * hid))], [("y", F32), ("y_h", F32)], hidden_size=hid)
    add("test_gru_22_linear_before_reset_reverse", 22, "GRU",
        [("x", x), ("w", randn(r, 1, 3 * hid, inp)), ("r", randn(r, 1, 3 * hid, hid) * 0.5),
         ("b", randn(r, 1, 6 * hid))], [("y", F32), ("y_h", F32)], hidden_size=hid, linear_before_reset=1,
        direction="reverse")
    add("test_lstm_22", 22, "LSTM", [("x", x), ("w", randn(r, 1, 4 * hid, inp)), ("r", randn(r, 1, 4 * hid, hid) * 0.5),
                                     ("b", randn(r, 1, 8 * hid))], [("y", F32), ("y_h", F32), ("y_c", F32)],
        hidden_size=hid)
    add("test_lstm_22_bidirectional_seq_lens_peepholes", 22, "LSTM",
        [("x", x), ("w", randn(r, 2, 4 * hid, inp)), ("r", randn(r, 2, 4 * hid, hid) * 0.5),
         ("b", randn(r, 2, 8 * hid)), ("seq_lens", np.array([3, 2], I32)), ("h0", randn(r, 2, batch, hid)),
         ("c0", randn(r, 2, batch, hid)), ("p", randn(r, 2, 3 * hid))], [("y", F32), ("y_h", F32), ("y_c", F32)],
        hidden_size=hid, direction="bidirectional")
    add("test_lstm_22_layout1", 22, "LSTM",
        [("x", randn(r, batch, seq, inp)), ("w", randn(r, 1, 4 * hid, inp)), ("r", randn(r, 1, 4 * hid, hid) * 0.5)],
        [("y", F32), ("y_h", F32), ("y_c", F32)], hidden_size=hid, layout=1)


# ---------------------------------------------------------------- strings

def string_cases():
    S = lambda *v: np.array(v, dtype=object)  # noqa: E731
    n = "test_stringconcat_20"
    add(f"{n}", 20, "StringConcat", [("a", S("abc", "", "x")), ("b", S("def", "g", ""))], STR)
    add(f"{n}_broadcast", 20, "StringConcat", [("a", S("a", "bc").reshape(2, 1)), ("b", S("1", "22", "333"))], STR)
    add(f"{n}_scalar_utf8", 20, "StringConcat", [("a", S("héllo ", "wörld ")), ("b", np.array("✓", dtype=object))],
        STR)
    add(f"{n}_empty_tensor", 20, "StringConcat", [("a", np.zeros((0,), dtype=object)), ("b", S("z"))], STR)
    n = "test_stringsplit_20"
    outs = [("y", STR), ("z", I64)]
    add(f"{n}_delimiter", 20, "StringSplit", [("x", S("a,b,c", "d", "", ",e,"))], outs, delimiter=",")
    add(f"{n}_maxsplit", 20, "StringSplit", [("x", S("1;2;3;4", "5;6"))], outs, delimiter=";", maxsplit=1)
    add(f"{n}_whitespace", 20, "StringSplit", [("x", S("  hello   world ", "one", "   ").reshape(3, 1))], outs)
    add(f"{n}_multichar_delimiter", 20, "StringSplit", [("x", S("a::b:::c", "::"))], outs, delimiter="::")
    add(f"{n}_whitespace_maxsplit", 20, "StringSplit", [("x", S("a b  c d"))], outs, maxsplit=2)
    add(f"{n}_2d", 20, "StringSplit", [("x", S("x-y", "z", "-", "p-q-r").reshape(2, 2))], outs, delimiter="-")
    n = "test_regexfullmatch_20"
    add(f"{n}_url", 20, "RegexFullMatch", [("x", S("www.google.com", "www.facebook.com", "www.bbc.co.uk"))], BOOL,
        pattern=r"www\.[\w.-]+\.\bcom\b")
    add(f"{n}_2d_alternation", 20, "RegexFullMatch", [("x", S("cat", "dog", "cats", "", "bird", "DOG").reshape(2, 3))],
        BOOL, pattern="(cat|dog)")
    add(f"{n}_full_not_partial", 20, "RegexFullMatch", [("x", S("abc123", "123", "abc", "a1"))], BOOL,
        pattern=r"[a-z]+\d+")
    add(f"{n}_empty_pattern", 20, "RegexFullMatch", [("x", S("", "a"))], BOOL, pattern="")
    add(f"{n}_character_classes", 20, "RegexFullMatch", [("x", S("2024-01-31", "2024-1-31", "abcd-ef-gh"))], BOOL,
        pattern=r"\d{4}-\d{2}-\d{2}")


def image_decoder_cases():
    # A 2x2 RGB PNG written by hand (zlib + crc), so no imaging library is needed.
    def chunk(kind, data):
        return (len(data).to_bytes(4, "big") + kind + data +
                zlib.crc32(kind + data).to_bytes(4, "big"))
    pixels = bytes([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255])  # filter byte + 2 RGB pixels per row
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", (2).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])) +
           chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))
    data = np.frombuffer(png, dtype=U8).copy()
    add("test_imagedecoder_20_png_rgb", 20, "ImageDecoder", [("x", data)], U8)
    add("test_imagedecoder_20_png_grayscale", 20, "ImageDecoder", [("x", data)], U8, pixel_format="Grayscale")


# ---------------------------------------------------------------- quantization

def quant_cases():
    r = rng("quant")
    ties = np.array([-3.0, -1.25, -0.75, -0.25, 0.0, 0.25, 0.75, 1.25, 2.0, 200.0, -200.0, 63.7], F32)
    for v in (19, 21, 23):
        n = f"test_quantizelinear_{v}"
        add(f"{n}_uint8_ties", v, "QuantizeLinear",
            [("x", ties), C("s", np.array(0.5, F32)), C("zp", np.array(128, U8))], U8)
        add(f"{n}_int8_saturate", v, "QuantizeLinear",
            [("x", ties), ("s", np.array(0.5, F32)), ("zp", np.array(-3, I8))], I8)
        add(f"{n}_per_axis", v, "QuantizeLinear",
            [("x", randn(r, 2, 3, 2) * 10), C("s", np.array([0.1, 0.2, 0.5], F32)),
             C("zp", np.array([0, 10, -10], I8))],
            I8, axis=1)
        add(f"{n}_no_zero_point", v, "QuantizeLinear", [("x", ties), C("s", np.array(1.0, F32))], U8)
        n = f"test_dequantizelinear_{v}"
        add(f"{n}_uint8", v, "DequantizeLinear",
            [("x", np.array([0, 3, 128, 255], U8)), C("s", np.array(0.25, F32)), C("zp", np.array(128, U8))], F32)
        add(f"{n}_int8_per_axis", v, "DequantizeLinear",
            [("x", r.integers(-128, 128, (2, 3, 2)).astype(I8)), ("s", np.array([0.5, 0.1, 2.0], F32)),
             ("zp", np.array([0, -5, 5], I8))], F32, axis=-2)
        add(f"{n}_int32", v, "DequantizeLinear", [("x", np.array([-1000, 0, 2**30], I32)), C("s", np.array(0.5, F32))],
            F32)
        add(f"{n}_no_zero_point", v, "DequantizeLinear", [("x", np.array([0, 7, 255], U8)), C("s", np.array(2.0, F32))],
            F32)
        if v >= 21:
            # Blocked quantization: scale and zero point have the input's shape with axis divided by block_size.
            xb = randn(r, 2, 6) * 4
            add(f"test_quantizelinear_{v}_blocked_axis1", v, "QuantizeLinear",
                [("x", xb), C("s", np.array([[0.1, 0.2, 0.3], [0.05, 0.5, 1.0]], F32)),
                 C("zp", np.array([[0, 1, -1], [2, -2, 0]], I8))], I8, axis=1, block_size=2)
            add(f"test_quantizelinear_{v}_blocked_axis0_uneven", v, "QuantizeLinear",
                [("x", randn(r, 5, 2) * 4), C("s", np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], F32)),
                 C("zp", np.array([[0, 1], [2, 3], [4, 5]], U8))], U8, axis=0, block_size=2)
            add(f"test_quantizelinear_{v}_output_dtype", v, "QuantizeLinear",
                [("x", ties), C("s", np.array(0.5, F32))], I8, output_dtype=TensorProto.INT8)
            add(f"test_quantizelinear_{v}_uint16", v, "QuantizeLinear",
                [("x", ties * 100), C("s", np.array(0.25, F32)), C("zp", np.array(30000, U16))], U16)
            add(f"test_quantizelinear_{v}_int16", v, "QuantizeLinear",
                [("x", ties * 100), C("s", np.array(0.5, F32)), C("zp", np.array(-7, I16))], I16)
            add(f"test_dequantizelinear_{v}_blocked_axis1", v, "DequantizeLinear",
                [("x", r.integers(-128, 128, (2, 6)).astype(I8)), C("s", np.array([[0.1, 0.2, 0.3], [1, 2, 3]], F32)),
                 C("zp", np.array([[0, 1, -1], [2, -2, 0]], I8))], F32, axis=1, block_size=2)
            add(f"test_dequantizelinear_{v}_blocked_axis0_uneven", v, "DequantizeLinear",
                [("x", r.integers(0, 256, (5, 2)).astype(U8)),
                 C("s", np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], F32))],
                F32, axis=0, block_size=2)
            add(f"test_dequantizelinear_{v}_uint16", v, "DequantizeLinear",
                [("x", np.array([0, 30000, 65535], U16)), C("s", np.array(0.25, F32)), C("zp", np.array(30000, U16))],
                F32)
            add(f"test_dequantizelinear_{v}_int16", v, "DequantizeLinear",
                [("x", np.array([-32768, 0, 32767], I16)), C("s", np.array(0.5, F32)), C("zp", np.array(-7, I16))],
                F32)
    add("test_quantizelinear_19_float16", 19, "QuantizeLinear",
        [("x", ties.astype(F16)), C("s", np.array(0.5, F16)), C("zp", np.array(128, U8))], U8)
    add("test_dequantizelinear_19_float16_scale", 19, "DequantizeLinear",
        [("x", np.array([0, 3, 128, 255], U8)), C("s", np.array(0.25, F16)), C("zp", np.array(128, U8))], F16)
    n = "test_qlinearmatmul_21"
    add(f"{n}_uint8", 21, "QLinearMatMul",
        [("a", r.integers(0, 256, (2, 3)).astype(U8)), C("as", np.array(0.02, F32)), C("az", np.array(120, U8)),
         ("b", r.integers(0, 256, (3, 4)).astype(U8)), C("bs", np.array(0.03, F32)), C("bz", np.array(130, U8)),
         C("ys", np.array(0.05, F32)), C("yz", np.array(128, U8))], U8)
    add(f"{n}_int8", 21, "QLinearMatMul",
        [("a", r.integers(-128, 128, (2, 2, 3)).astype(I8)), C("as", np.array(0.02, F32)), C("az", np.array(-1, I8)),
         ("b", r.integers(-128, 128, (3, 2)).astype(I8)), C("bs", np.array(0.03, F32)), C("bz", np.array(2, I8)),
         C("ys", np.array(0.1, F32)), C("yz", np.array(0, I8))], I8)
    add(f"{n}_per_column_b", 21, "QLinearMatMul",
        [("a", r.integers(0, 256, (2, 3)).astype(U8)), C("as", np.array(0.02, F32)), C("az", np.array(120, U8)),
         ("b", r.integers(0, 256, (3, 2)).astype(U8)), C("bs", np.array([0.03, 0.01], F32)),
         C("bz", np.array([130, 100], U8)), C("ys", np.array(0.05, F32)), C("yz", np.array(128, U8))], U8)


# ---------------------------------------------------------------- opset 23 transformer ops

def rotary_cases():
    n = "test_rotaryembedding_23"
    r = rng(n)
    b, h, s, d = 1, 2, 3, 8
    max_pos = 6
    theta = np.arange(max_pos)[:, None] * (1.0 / 10000 ** (np.arange(0, d, 2) / d))[None, :]
    cos, sin = np.cos(theta).astype(F32), np.sin(theta).astype(F32)
    pos = np.array([[0, 2, 5]], I64)
    x4 = randn(r, b, h, s, d)
    add(f"{n}_4d_position_ids", 23, "RotaryEmbedding", [("x", x4), C("cos", cos), C("sin", sin), ("pos", pos)], F32)
    add(f"{n}_4d_interleaved", 23, "RotaryEmbedding", [("x", x4), C("cos", cos), C("sin", sin), ("pos", pos)], F32,
        interleaved=1)
    add(f"{n}_3d_num_heads", 23, "RotaryEmbedding",
        [("x", x4.transpose(0, 2, 1, 3).reshape(b, s, h * d)), C("cos", cos), C("sin", sin), ("pos", pos)], F32,
        num_heads=h)
    # Without position_ids the caches are already indexed: (batch, seq, rotary_dim / 2).
    add(f"{n}_no_position_ids", 23, "RotaryEmbedding", [("x", x4), ("cos", cos[None, :s]), ("sin", sin[None, :s])],
        F32)
    half = theta[:, : d // 4]
    add(f"{n}_partial_rotary_dim", 23, "RotaryEmbedding",
        [("x", x4), C("cos", np.cos(half).astype(F32)), C("sin", np.sin(half).astype(F32)), ("pos", pos)], F32,
        rotary_embedding_dim=d // 2)
    add(f"{n}_partial_interleaved_3d", 23, "RotaryEmbedding",
        [("x", randn(r, 2, s, h * d)), C("cos", np.cos(half).astype(F32)), C("sin", np.sin(half).astype(F32)),
         ("pos", np.array([[0, 1, 2], [3, 4, 5]], I64))], F32, rotary_embedding_dim=d // 2, num_heads=h, interleaved=1)
    add(f"{n}_float16", 23, "RotaryEmbedding",
        [("x", x4.astype(F16)), C("cos", cos.astype(F16)), C("sin", sin.astype(F16)), ("pos", pos)], F16)


def attention_cases():
    n = "test_attention_23"
    r = rng(n)
    B, H, S, L, D = 2, 2, 3, 4, 4
    q, k, v = randn(r, B, H, S, D), randn(r, B, H, L, D), randn(r, B, H, L, D)
    three = [("y", F32)]
    add(f"{n}_4d", 23, "Attention", [("q", q), ("k", k), ("v", v)], three)
    add(f"{n}_4d_scale", 23, "Attention", [("q", q), ("k", k), ("v", v)], three, scale=0.1)
    add(f"{n}_4d_causal", 23, "Attention", [("q", q), ("k", randn(r, B, H, S, D)), ("v", randn(r, B, H, S, D))],
        three, is_causal=1)
    add(f"{n}_4d_causal_longer_kv", 23, "Attention", [("q", q), ("k", k), ("v", v)], three, is_causal=1)
    mask_b = r.integers(0, 2, (S, L)).astype(BOOL)
    mask_b[:, 0] = True
    add(f"{n}_4d_bool_mask", 23, "Attention", [("q", q), ("k", k), ("v", v), ("m", mask_b)], three)
    add(f"{n}_4d_float_mask_4d", 23, "Attention", [("q", q), ("k", k), ("v", v), ("m", randn(r, B, 1, S, L))], three)
    add(f"{n}_4d_float_mask_neg_inf", 23, "Attention",
        [("q", q), ("k", k), ("v", v), ("m", np.where(mask_b, 0, -np.inf).astype(F32))], three)
    add(f"{n}_4d_gqa", 23, "Attention", [("q", randn(r, B, 4, S, D)), ("k", k), ("v", v)], three)
    add(f"{n}_4d_diff_head_size_v", 23, "Attention", [("q", q), ("k", k), ("v", randn(r, B, H, L, 6))], three)
    add(f"{n}_3d", 23, "Attention", [("q", randn(r, B, S, H * D)), ("k", randn(r, B, L, H * D)),
                                     ("v", randn(r, B, L, H * D))], three, q_num_heads=H, kv_num_heads=H)
    add(f"{n}_3d_gqa_causal", 23, "Attention", [("q", randn(r, B, S, 4 * D)), ("k", randn(r, B, S, 2 * D)),
                                                ("v", randn(r, B, S, 2 * D))], three, q_num_heads=4, kv_num_heads=2,
        is_causal=1)
    past = [("pk", randn(r, B, H, 2, D)), ("pv", randn(r, B, H, 2, D))]
    present = [("y", F32), ("present_k", F32), ("present_v", F32)]
    add(f"{n}_4d_past_kv", 23, "Attention", [("q", q), ("k", k[:, :, :1]), ("v", v[:, :, :1]), None] + past, present)
    add(f"{n}_4d_past_kv_causal", 23, "Attention", [("q", q), ("k", k[:, :, :3]), ("v", v[:, :, :3]), None] + past,
        present, is_causal=1)
    add(f"{n}_4d_past_kv_mask", 23, "Attention",
        [("q", q[:, :, :1]), ("k", k[:, :, :1]), ("v", v[:, :, :1]), ("m", randn(r, 1, 3))] + past, present)
    add(f"{n}_softcap", 23, "Attention", [("q", q * 3), ("k", k), ("v", v)], three, softcap=2.0)
    for mode in (0, 1, 2, 3):
        add(f"{n}_qk_matmul_output_mode_{mode}", 23, "Attention",
            [("q", q), ("k", k[:, :, :2]), ("v", v[:, :, :2]), ("m", randn(r, S, 4))] + past,
            [("y", F32), ("present_k", F32), ("present_v", F32), ("qk", F32)], qk_matmul_output_mode=mode,
            softcap=3.0 if mode >= 2 else 0.0)
    add(f"{n}_float16", 23, "Attention", [("q", q.astype(F16)), ("k", k.astype(F16)), ("v", v.astype(F16))], F16)


# ---------------------------------------------------------------- old operators at new opsets

def carried_over_cases():
    r = rng("carried_over")
    a, b = randn(r, 2, 3, 4), randn(r, 4)
    add("test_relu_22", 22, "Relu", [("x", a)], F32)
    add("test_add_23_broadcast", 23, "Add", [("a", a), ("b", b)], F32)
    add("test_matmul_23", 23, "MatMul", [("a", a), ("b", randn(r, 4, 5))], F32)
    add("test_softmax_23", 23, "Softmax", [("x", a)], F32, axis=1)
    add("test_layernormalization_23", 23, "LayerNormalization",
        [("x", a), ("s", randn(r, 4)), ("b", randn(r, 4))], F32)
    add("test_gemm_23_transb", 23, "Gemm", [("a", randn(r, 2, 3)), ("b", randn(r, 4, 3)), ("c", randn(r, 4))], F32,
        transB=1)
    add("test_concat_23", 23, "Concat", [("a", a), ("b", randn(r, 2, 1, 4))], F32, axis=1)
    add("test_gather_23", 23, "Gather", [("x", a), ("i", ints(2, 0, -1))], F32, axis=1)
    add("test_where_23", 23, "Where", [("c", r.integers(0, 2, (3, 4)).astype(BOOL)), ("a", randn(r, 3, 4)),
                                       ("b", np.array(0.5, F32))], F32)
    add("test_slice_23", 23, "Slice", [("x", a), C("s", ints(0, -1)), C("e", ints(2, -4)), C("ax", ints(0, 2)),
                                       C("st", ints(1, -1))], F32)
    add("test_expand_23", 23, "Expand", [("x", randn(r, 3, 1)), C("shape", ints(2, 3, 4))], F32)
    add("test_sigmoid_23", 23, "Sigmoid", [("x", a)], F32)
    add("test_erf_23", 23, "Erf", [("x", a)], F32)
    add("test_batchnormalization_23", 23, "BatchNormalization",
        [("x", randn(r, 2, 3, 2)), ("s", randn(r, 3)), ("b", randn(r, 3)), ("m", randn(r, 3)),
         ("v", np.abs(randn(r, 3)) + 0.5)], F32)
    add("test_topk_23", 23, "TopK", [("x", randn(r, 3, 5)), C("k", ints(2))], [("v", F32), ("i", I64)])
    add("test_cumsum_23", 23, "CumSum", [("x", randn(r, 2, 3)), C("axis", np.array(1, I64))], F32, exclusive=1)
    add("test_argmax_23", 23, "ArgMax", [("x", randn(r, 3, 4))], I64, axis=1, select_last_index=1)
    add("test_einsum_23", 23, "Einsum", [("a", randn(r, 2, 3)), ("b", randn(r, 3, 4))], F32, equation="ij,jk->ik")


FAMILIES = [reduce_cases, split_cases, pad_cases, center_crop_pad_cases, col2im_cases, scatter_cases, bitwise_cases,
            optional_cases, cast_cases, constant_cases, shape_op_cases, control_flow_cases, equal_cases, pool_cases,
            conv_cases, norm_cases, resize_cases, gridsample_cases, affine_grid_cases, dft_cases, activation_cases,
            misc_22_cases, rnn_cases, string_cases, image_decoder_cases, quant_cases, rotary_cases, attention_cases,
            carried_over_cases]


def write(out_dir):
    for family in FAMILIES:
        family()
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    for name, (model, inputs) in sorted(CASES.items()):
        case_dir = os.path.join(out_dir, name)
        data_dir = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(data_dir)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        for i, (value_info, value) in enumerate(zip(model.graph.input, inputs)):
            with open(os.path.join(data_dir, f"input_{i}.pb"), "wb") as f:
                f.write(tensor(value_info.name, value).SerializeToString())
    print(f"wrote {len(CASES)} cases to {out_dir}")


def set_output_shapes(cases_dir):
    """Declares each graph output's shape as the recorded output_N.pb has it.

    The outputs are written without a shape (it is not known before ONNX Runtime
    runs the case), but the ONNX checker requires one on main-graph outputs."""
    count = 0
    for name in sorted(os.listdir(cases_dir)):
        model_path = os.path.join(cases_dir, name, "model.onnx")
        if not os.path.exists(model_path):
            continue
        model = onnx.load(model_path)
        for i, output in enumerate(model.graph.output):
            recorded = TensorProto()
            with open(os.path.join(cases_dir, name, "test_data_set_0", f"output_{i}.pb"), "rb") as f:
                recorded.ParseFromString(f.read())
            shape = output.type.tensor_type.shape
            shape.Clear()
            output.type.tensor_type.SetInParent()
            shape.SetInParent()
            for d in recorded.dims:
                shape.dim.add().dim_value = d
        with open(model_path, "wb") as f:
            f.write(model.SerializeToString())
        count += 1
    print(f"set the output shapes of {count} cases in {cases_dir}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--set-output-shapes":
        set_output_shapes(sys.argv[2])
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("--"):
        write(sys.argv[1])
    else:
        sys.exit("usage: gen_cases.py OUT_DIR | gen_cases.py --set-output-shapes CASES_DIR")
