#!/usr/bin/env python3
"""`onyx run` on bfloat16 models against references computed here.

usage: bfloat16_test.py --onyx BIN

ONNX Runtime's CPU provider runs almost no bfloat16 kernel, so the references
come from torch instead:

  cnn_bf16          a whole-bfloat16 CNN at opset 22 (Conv, Relu, MaxPool,
                    depthwise Conv, HardSwish, 1x1 Conv, Elu, AveragePool,
                    GlobalAveragePool, Flatten, Gemm). Reference: the same
                    network in float64 with every op output rounded to
                    bfloat16 (what an engine computing in float per op and
                    storing bfloat16 must approach); torch's own bfloat16
                    kernels must agree with that reference within the same
                    bound, which shows the bound is not loose.
  unary_bf16        opset-22 bfloat16 element-wise ops (Sin, Cos, Tan, Sinh,
                    Cosh, Asin, Acos, Atan, Asinh, Acosh, Atanh, Elu, Selu,
                    Softplus, Softsign, ThresholdedRelu, HardSigmoid,
                    HardSwish, Mish, Round): each output within one bfloat16
                    step of float64's result (Round exactly).
  ops_bf16          the other opset-22 bfloat16 ops that carry weights or
                    state (ConvTranspose, InstanceNormalization, LpNormalization,
                    Lp/Max pools, MaxUnpool, RoiAlign, GridSample, DeformConv,
                    LSTM, GRU, RNN, NegativeLogLikelihoodLoss): each output
                    within one bfloat16 step of the same model run in float32
                    on the same (bfloat16-exact) values, the float32 kernels
                    being the ones the conformance suites check.
  bf16_weights      a float MLP whose weights are stored as bfloat16 behind
                    Cast nodes, as size-reduced exports ship them; reference:
                    float64 on the decoded weights.

Each model runs at optimization levels `all` and `disabled`. Prints
"PASS case (level): ..." / "FAIL case (level): ..." and exits non-zero on any
failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 22
IR_VERSION = 10


def to_bf16_bits(a):
    """float array -> uint16 bfloat16 bit patterns, rounded to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def round_bf16(a):
    return from_bf16_bits(to_bf16_bits(np.asarray(a, dtype=np.float32))).astype(np.float64)


def bf16_tensor(name, values):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend(values.shape)
    t.raw_data = to_bf16_bits(values).tobytes()
    return t


def make_model(nodes, inputs, outputs, initializers=(), opset=OPSET):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    return model


def run_onyx(onyx, model, inputs, level, tmp, tag):
    model_path = os.path.join(tmp, tag + ".onnx")
    onnx.save(model, model_path)
    in_dir = os.path.join(tmp, tag + "_in")
    out_dir = os.path.join(tmp, tag + "_out_" + level)
    os.makedirs(in_dir, exist_ok=True)
    for i, t in enumerate(inputs):
        with open(os.path.join(in_dir, "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
    res = subprocess.run([onyx, "run", "--model", model_path, "--inputs", in_dir, "--outputs", out_dir,
                          "--optimization", level], capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise RuntimeError("onyx run exited %d: %s" % (res.returncode, res.stderr.strip()[-800:]))
    outputs = []
    n = 0
    while os.path.exists(os.path.join(out_dir, "output_%d.pb" % n)):
        t = onnx.load_tensor(os.path.join(out_dir, "output_%d.pb" % n))
        outputs.append((t.data_type, numpy_helper.to_array(t).astype(np.float64)))
        n += 1
    return outputs


# ---- cnn_bf16 ----------------------------------------------------------------

def cnn_case(rng):
    def w(*shape, scale):
        return round_bf16(rng.standard_normal(shape) * scale)

    p = {
        "w1": w(8, 3, 3, 3, scale=0.3), "b1": w(8, scale=0.1),
        "w2": w(8, 1, 3, 3, scale=0.4), "b2": w(8, scale=0.1),
        "w3": w(16, 8, 1, 1, scale=0.35), "b3": w(16, scale=0.1),
        "fc": w(10, 16, scale=0.4), "fb": w(10, scale=0.1),
    }
    x = round_bf16(rng.standard_normal((2, 3, 16, 16)))
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("HardSwish", ["c2"], ["h2"]),
        helper.make_node("Conv", ["h2", "w3", "b3"], ["c3"]),
        helper.make_node("Elu", ["c3"], ["e3"], alpha=0.8),
        helper.make_node("AveragePool", ["e3"], ["a3"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("GlobalAveragePool", ["a3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], transB=1),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, 3, 16, 16])],
                       [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [2, 10])],
                       [bf16_tensor(k, v) for k, v in p.items()])
    return model, [bf16_tensor("x", x)], x, p


def cnn_reference(x, p, r, torch_dtype):
    """The network in torch at `torch_dtype`; `r` rounds after every op."""
    import torch
    import torch.nn.functional as F

    t = {k: torch.tensor(v).to(torch_dtype) for k, v in p.items()}
    y = torch.tensor(x).to(torch_dtype)
    y = r(F.conv2d(y, t["w1"], t["b1"], padding=1))
    y = r(F.relu(y))
    y = r(F.max_pool2d(y, 2))
    y = r(F.conv2d(y, t["w2"], t["b2"], padding=1, groups=8))
    y = r(F.hardswish(y))
    y = r(F.conv2d(y, t["w3"], t["b3"]))
    y = r(F.elu(y, alpha=0.8))
    y = r(F.avg_pool2d(y, 3, stride=1, padding=1, count_include_pad=False))
    y = r(F.adaptive_avg_pool2d(y, 1))
    y = r(F.linear(y.flatten(1), t["fc"], t["fb"]))
    return y.to(torch.float64).numpy()


def check_cnn(onyx, tmp, rng):
    import torch

    model, inputs, x, p = cnn_case(rng)
    per_op = cnn_reference(x, p, lambda v: v.to(torch.bfloat16).to(torch.float64), torch.float64)
    torch_bf16 = cnn_reference(x, p, lambda v: v, torch.bfloat16)
    bound = 0.02 * np.abs(per_op).max()
    if per_op.std() < 0.05:
        return ["reference output is near-constant (std %.3g)" % per_op.std()]
    errors = []
    if np.abs(torch_bf16 - per_op).max() > bound:
        errors.append("torch's bfloat16 differs from the per-op reference by %.3g > %.3g" %
                      (np.abs(torch_bf16 - per_op).max(), bound))
    for level in ("all", "disabled"):
        (dtype, got), = run_onyx(onyx, model, inputs, level, tmp, "cnn_bf16")
        diff = np.abs(got - per_op).max()
        if dtype != TensorProto.BFLOAT16:
            errors.append("(%s) output is data type %d, not bfloat16" % (level, dtype))
        elif got.shape != per_op.shape or diff > bound:
            errors.append("(%s) max |onyx - reference| %.3g > %.3g (shape %s)" % (level, diff, bound, got.shape))
        else:
            print("PASS cnn_bf16 (%s): max |diff| %.3g, bound %.3g; torch bf16 vs reference %.3g" %
                  (level, diff, bound, np.abs(torch_bf16 - per_op).max()))
    return errors


# ---- unary_bf16 --------------------------------------------------------------

def mish(v):
    return v * np.tanh(np.log1p(np.exp(v)))


SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875

# op, attributes, input range, float64 formula
UNARY = [
    ("Sin", {}, (-6, 6), np.sin),
    ("Cos", {}, (-6, 6), np.cos),
    ("Tan", {}, (-1.4, 1.4), np.tan),
    ("Sinh", {}, (-4, 4), np.sinh),
    ("Cosh", {}, (-4, 4), np.cosh),
    ("Asin", {}, (-0.99, 0.99), np.arcsin),
    ("Acos", {}, (-0.99, 0.99), np.arccos),
    ("Atan", {}, (-8, 8), np.arctan),
    ("Asinh", {}, (-8, 8), np.arcsinh),
    ("Acosh", {}, (1.01, 8), np.arccosh),
    ("Atanh", {}, (-0.99, 0.99), np.arctanh),
    ("Elu", {"alpha": 0.5}, (-4, 4), lambda v: np.where(v > 0, v, 0.5 * np.expm1(v))),
    ("Selu", {}, (-4, 4), lambda v: SELU_GAMMA * np.where(v > 0, v, SELU_ALPHA * np.expm1(v))),
    ("Softplus", {}, (-6, 6), lambda v: np.log1p(np.exp(v))),
    ("Softsign", {}, (-6, 6), lambda v: v / (1 + np.abs(v))),
    ("ThresholdedRelu", {"alpha": 0.7}, (-3, 3), lambda v: np.where(v > 0.7, v, 0.0)),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, (-4, 4), lambda v: np.clip(0.3 * v + 0.4, 0, 1)),
    ("HardSwish", {}, (-5, 5), lambda v: v * np.clip(v / 6 + 0.5, 0, 1)),
    ("Mish", {}, (-5, 5), mish),
    ("Round", {}, (-5, 5), np.round),
]


def check_unary(onyx, tmp, rng):
    errors = []
    n = 257
    inputs, nodes, in_infos, out_infos, refs, x_of = [], [], [], [], [], {}
    for i, (op, attrs, (lo, hi), formula) in enumerate(UNARY):
        x = round_bf16(rng.uniform(lo, hi, n))
        if op == "Round":  # ties at .5 must go to even
            x[:8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5]
        inputs.append(bf16_tensor("x%d" % i, x))
        in_infos.append(helper.make_tensor_value_info("x%d" % i, TensorProto.BFLOAT16, [n]))
        out_infos.append(helper.make_tensor_value_info("y%d" % i, TensorProto.BFLOAT16, [n]))
        nodes.append(helper.make_node(op, ["x%d" % i], ["y%d" % i], **attrs))
        refs.append(formula(x))
        x_of[op] = x
    model = make_model(nodes, in_infos, out_infos)
    for level in ("all", "disabled"):
        outputs = run_onyx(onyx, model, inputs, level, tmp, "unary_bf16")
        if len(outputs) != len(UNARY):
            errors.append("(%s) %d outputs, expected %d" % (level, len(outputs), len(UNARY)))
            continue
        worst = 0.0
        for (op, _, _, _), (dtype, got), want in zip(UNARY, outputs, refs):
            if dtype != TensorProto.BFLOAT16:
                errors.append("(%s) %s output is data type %d, not bfloat16" % (level, op, dtype))
                continue
            # One bfloat16 step (8 significant bits) of the exact result, and
            # a floor for results that cancel to about zero.
            step = 0.0 if op == "Round" else 2.0 ** -7
            bound = step * np.abs(want) + (0.0 if op == "Round" else 1e-6)
            bad = np.abs(got - want) > bound
            if bad.any():
                i = int(np.argmax(bad))
                errors.append("(%s) %s: %d of %d outside one bfloat16 step, e.g. x=%r: onyx %r, float64 %r" %
                              (level, op, int(bad.sum()), n, float(x_of[op][i]), float(got[i]), float(want[i])))
            worst = max(worst, float((np.abs(got - want) / np.maximum(np.abs(want), 1e-6)).max()))
        if not any(e.startswith("(%s)" % level) for e in errors):
            print("PASS unary_bf16 (%s): %d ops, worst relative error %.3g" % (level, len(UNARY), worst))
    return errors


# ---- ops_bf16 ----------------------------------------------------------------

def ops_cases(rng):
    """(op, [(input name, values or int64 array)], output rank, attributes)."""
    n = lambda *shape: round_bf16(rng.standard_normal(shape))  # noqa: E731
    return [
        ("ConvTranspose", [("x", n(1, 2, 3, 3)), ("w", n(2, 3, 3, 3))], 4, {"strides": [2, 2]}),
        ("InstanceNormalization", [("x", n(1, 2, 3, 3)), ("s", n(2)), ("b", n(2))], 4, {}),
        ("LpNormalization", [("x", n(2, 5))], 2, {"p": 2}),
        ("GlobalLpPool", [("x", n(1, 2, 3, 3))], 4, {}),
        ("GlobalMaxPool", [("x", n(1, 2, 3, 3))], 4, {}),
        ("LpPool", [("x", n(1, 2, 4, 4))], 4, {"kernel_shape": [2, 2]}),
        ("MaxUnpool", [("x", n(1, 1, 2, 2)), ("i", np.array([5, 7, 8, 14], np.int64).reshape(1, 1, 2, 2))], 4,
         {"kernel_shape": [2, 2], "strides": [2, 2]}),
        ("RoiAlign", [("x", n(1, 2, 6, 6)), ("rois", round_bf16([[0.5, 0.5, 4.0, 3.5]])),
                      ("batch", np.array([0], np.int64))], 4, {"output_height": 2, "output_width": 3}),
        ("GridSample", [("x", n(1, 2, 4, 4)), ("grid", round_bf16(rng.uniform(-1, 1, (1, 3, 3, 2))))], 4, {}),
        ("DeformConv", [("x", n(1, 2, 5, 5)), ("w", n(2, 2, 2, 2)), ("offset", round_bf16(rng.uniform(-1, 1, (1, 8, 4, 4))))],
         4, {}),
        ("LSTM", [("x", n(3, 2, 4)), ("w", round_bf16(rng.standard_normal((1, 20, 4)) * 0.5)),
                  ("r", round_bf16(rng.standard_normal((1, 20, 5)) * 0.5))], 4, {"hidden_size": 5}),
        ("GRU", [("x", n(3, 2, 4)), ("w", round_bf16(rng.standard_normal((1, 15, 4)) * 0.5)),
                 ("r", round_bf16(rng.standard_normal((1, 15, 5)) * 0.5))], 4, {"hidden_size": 5}),
        ("RNN", [("x", n(3, 2, 4)), ("w", round_bf16(rng.standard_normal((1, 5, 4)) * 0.5)),
                 ("r", round_bf16(rng.standard_normal((1, 5, 5)) * 0.5))], 4, {"hidden_size": 5}),
        ("NegativeLogLikelihoodLoss", [("x", n(3, 4)), ("t", np.array([0, 1, 3], np.int64))], 0,
         {"reduction": "mean"}),
    ]


def op_model(op, inputs, rank, attrs, elem):
    infos = [helper.make_tensor_value_info(name, TensorProto.INT64 if v.dtype == np.int64 else elem, list(v.shape))
             for name, v in inputs]
    out = [helper.make_tensor_value_info("y", elem, ["d%d" % i for i in range(rank)])]
    return make_model([helper.make_node(op, [name for name, _ in inputs], ["y"], **attrs)], infos, out)


def check_ops(onyx, tmp, rng):
    errors = []
    cases = ops_cases(rng)
    for op, inputs, rank, attrs in cases:
        f32 = [numpy_helper.from_array(v if v.dtype == np.int64 else v.astype(np.float32), name)
               for name, v in inputs]
        bf16 = [numpy_helper.from_array(v, name) if v.dtype == np.int64 else bf16_tensor(name, v)
                for name, v in inputs]
        try:
            (_, want), = run_onyx(onyx, op_model(op, inputs, rank, attrs, TensorProto.FLOAT), f32, "all", tmp, op)
            (dtype, got), = run_onyx(onyx, op_model(op, inputs, rank, attrs, TensorProto.BFLOAT16), bf16, "all",
                                     tmp, op + "_bf16")
        except RuntimeError as e:
            errors.append("%s: %s" % (op, e))
            continue
        bound = 2.0 ** -7 * np.abs(want) + 1e-6
        if dtype != TensorProto.BFLOAT16 or got.shape != want.shape:
            errors.append("%s: bfloat16 run gave type %d shape %s, float32 shape %s" % (op, dtype, got.shape,
                                                                                    want.shape))
        elif np.any(np.abs(got - want) > bound):
            i = np.unravel_index(np.argmax(np.abs(got - want) - bound), got.shape)
            errors.append("%s: bfloat16 %r vs float32 %r at %s" % (op, float(got[i]), float(want[i]), list(i)))
    if not errors:
        print("PASS ops_bf16: %d ops within one bfloat16 step of float32" % len(cases))
    return errors


# ---- bf16_weights ------------------------------------------------------------

def check_bf16_weights(onyx, tmp, rng):
    w1 = round_bf16(rng.standard_normal((32, 64)) * 0.2)
    b1 = round_bf16(rng.standard_normal(64) * 0.1)
    w2 = round_bf16(rng.standard_normal((64, 8)) * 0.2)
    x = rng.standard_normal((4, 32)).astype(np.float32)
    nodes = [
        helper.make_node("Cast", ["w1_bf16"], ["w1"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["b1_bf16"], ["b1"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["w2_bf16"], ["w2"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Tanh", ["hb"], ["t"]),
        helper.make_node("MatMul", ["t", "w2"], ["y"]),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
                       [bf16_tensor("w1_bf16", w1), bf16_tensor("b1_bf16", b1), bf16_tensor("w2_bf16", w2)],
                       opset=17)
    want = np.tanh(x.astype(np.float64) @ w1 + b1) @ w2
    errors = []
    for level in ("all", "disabled"):
        (dtype, got), = run_onyx(onyx, model, [numpy_helper.from_array(x, "x")], level, tmp, "bf16_weights")
        diff = np.abs(got - want).max()
        if dtype != TensorProto.FLOAT or got.shape != want.shape or diff > 1e-4 * np.abs(want).max():
            errors.append("(%s) bf16_weights: type %d shape %s, max |diff| %.3g" % (level, dtype, got.shape, diff))
        else:
            print("PASS bf16_weights (%s): max |diff| %.3g" % (level, diff))
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onyx", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(22)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, check in (("cnn_bf16", check_cnn), ("unary_bf16", check_unary), ("ops_bf16", check_ops),
                            ("bf16_weights", check_bf16_weights)):
            try:
                errors = check(args.onyx, tmp, rng)
            except Exception as e:  # a crash of one case must not hide the others
                errors = [str(e)]
            for e in errors:
                print("FAIL %s: %s" % (name, e))
            failures += errors
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
