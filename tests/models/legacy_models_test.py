#!/usr/bin/env python3
"""`onyx run` on models written at opsets 1 and 6, against numpy.

usage: legacy_models_test.py --onyx BIN

Builds the models with onnx.helper (IR version 3, initializers listed as graph
inputs, as exporters of that time wrote them):
  - opset 6: Conv, BatchNormalization(is_test), Relu, MaxPool, Reshape,
    Gemm(broadcast), Dropout(is_test), Add(broadcast, axis) and Softmax;
  - opset 1: Reshape with a `shape` attribute and Concat without an axis;
  - opset 8: ImageScaler (experimental, no schema) then Relu.
Each output must match numpy within rtol 1e-4, atol 1e-6.
"""
import argparse
import itertools
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def legacy_cnn():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    inits = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3,
        "cb": rng.standard_normal(4).astype(np.float32),
        "scale": rng.random(4).astype(np.float32) + 0.5,
        "bias": rng.standard_normal(4).astype(np.float32),
        "mean": rng.standard_normal(4).astype(np.float32) * 0.1,
        "var": rng.random(4).astype(np.float32) + 0.5,
        "gw": rng.standard_normal((5, 36)).astype(np.float32) * 0.2,
        "gb": rng.standard_normal(5).astype(np.float32),
        "ab": rng.standard_normal(5).astype(np.float32),
        "shape": np.array([2, 36], dtype=np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["bn"], is_test=1,
                         epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["f"]),
        helper.make_node("Gemm", ["f", "gw", "gb"], ["g"], transB=1, broadcast=1),
        helper.make_node("Dropout", ["g"], ["d"], is_test=1, ratio=0.3),
        helper.make_node("Add", ["d", "ab"], ["a"], broadcast=1, axis=1),
        helper.make_node("Softmax", ["a"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    inputs += [helper.make_tensor_value_info(k, TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT,
                                             list(v.shape)) for k, v in inits.items()]
    graph = helper.make_graph(nodes, "legacy_cnn", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 3
    # numpy reference, in float64
    i = {k: v.astype(np.float64) for k, v in inits.items() if k != "shape"}
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((2, 4, 6, 6))
    for n, o, h, w in itertools.product(range(2), range(4), range(6), range(6)):
        c[n, o, h, w] = (xp[n, :, h:h + 3, w:w + 3] * i["w"][o]).sum() + i["cb"][o]
    per_channel = lambda v: v[None, :, None, None]
    bn = (c - per_channel(i["mean"])) / np.sqrt(per_channel(i["var"]) + 1e-5) * per_channel(i["scale"]) \
        + per_channel(i["bias"])
    p = np.maximum(bn, 0).reshape(2, 4, 3, 2, 3, 2).max(axis=(3, 5))
    a = p.reshape(2, 36) @ i["gw"].T + i["gb"] + i["ab"]
    e = np.exp(a - a.max(1, keepdims=True))
    return model, x, e / e.sum(1, keepdims=True)


def reshape_concat_opset1():
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)
    nodes = [helper.make_node("Reshape", ["x"], ["r"], shape=[3, 4]),
             helper.make_node("Concat", ["r", "r"], ["y"])]  # opset 1: axis 1 by default
    graph = helper.make_graph(nodes, "reshape_concat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    r = x.reshape(3, 4)
    return model, x, np.concatenate([r, r], axis=1)


def image_scaler_opset8():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(1, 3, 2, 2)
    nodes = [helper.make_node("ImageScaler", ["x"], ["s"], scale=0.5, bias=[1.0, -2.0, 0.25]),
             helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "image_scaler", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 4
    bias = np.array([1.0, -2.0, 0.25]).reshape(1, 3, 1, 1)
    return model, x, np.maximum(0.5 * x.astype(np.float64) + bias, 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onyx", required=True)
    args = p.parse_args()
    failed = 0
    for name, make in [("legacy_cnn_opset6", legacy_cnn), ("reshape_concat_opset1", reshape_concat_opset1),
                       ("image_scaler_opset8", image_scaler_opset8)]:
        model, x, want = make()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.onnx")
            onnx.save(model, path)
            os.makedirs(os.path.join(d, "in"))
            with open(os.path.join(d, "in", "input_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, "x").SerializeToString())
            run = subprocess.run([args.onyx, "run", "--model", path, "--inputs", os.path.join(d, "in"),
                                  "--outputs", os.path.join(d, "out")], capture_output=True, text=True)
            if run.returncode != 0:
                failed += 1
                print(f"FAIL {name}: {run.stderr.strip()}")
                continue
            got = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "out", "output_0.pb")))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-6):
            failed += 1
            print(f"FAIL {name}: shape {got.shape} vs {want.shape}, max diff "
                  f"{np.abs(got - want).max() if got.shape == want.shape else 'n/a'}")
        else:
            print(f"PASS {name}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
