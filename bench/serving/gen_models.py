#!/usr/bin/python3
"""Writes the serving benchmark's model repository: a small MLP and a ResNet-like CNN.

usage: gen_models.py OUT_DIR

Produces, with a symbolic batch dimension and fixed-seed weights (a rerun writes
identical bytes):
  OUT_DIR/mlp/config.yaml, OUT_DIR/mlp/1/model.onnx
      input  FP32 [N, 64] -> 256 -> 256 -> output logits FP32 [N, 10] (ReLU MLP)
  OUT_DIR/resnet/config.yaml, OUT_DIR/resnet/1/model.onnx
      input  FP32 [N, 3, 64, 64] -> stem conv 3x3/2 (32 ch) -> 3 residual blocks
      (32 ch, 32x32) -> conv 3x3/2 (64 ch) -> 1 residual block (64 ch, 16x16)
      -> global average pool -> Gemm -> output logits FP32 [N, 10]
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 8
SEED = 11

MLP_CONFIG = """\
max_batch_size: 64
buckets: [1, 2, 4, 8, 16, 32, 64]
dynamic_batching:
  max_queue_delay_us: 200
  max_queue_size: 1024
instance_count: 2
"""

RESNET_CONFIG = """\
max_batch_size: 16
buckets: [1, 2, 4, 8, 16]
dynamic_batching:
  max_queue_delay_us: 200
  max_queue_size: 1024
instance_count: 2
"""


def he(rng, shape, fan_in):
    return (rng.normal(0.0, 1.0, size=shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def finish(name, nodes, inputs, outputs, params):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=[numpy_helper.from_array(v, name=k) for k, v in params.items()])
    model = helper.make_model(graph, producer_name="onyx-bench-serving",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def build_mlp(rng):
    sizes = [64, 256, 256, 10]
    params, nodes = {}, []
    x = "input"
    for i in range(3):
        params["W%d" % i] = he(rng, (sizes[i], sizes[i + 1]), sizes[i])
        params["b%d" % i] = np.zeros(sizes[i + 1], np.float32) + np.float32(0.01)
        nodes.append(helper.make_node("MatMul", [x, "W%d" % i], ["mm%d" % i]))
        out = "logits" if i == 2 else "fc%d" % i
        nodes.append(helper.make_node("Add", ["mm%d" % i, "b%d" % i], [out]))
        if i < 2:
            nodes.append(helper.make_node("Relu", [out], ["relu%d" % i]))
            x = "relu%d" % i
    return finish("mlp", nodes,
                  [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 64])],
                  [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], params)


def build_resnet(rng):
    params, nodes = {}, []
    counter = [0]

    def conv(x, cin, cout, stride, relu):
        i = counter[0]
        counter[0] += 1
        params["cw%d" % i] = he(rng, (cout, cin, 3, 3), cin * 9)
        params["cb%d" % i] = np.zeros(cout, np.float32)
        y = "conv%d" % i
        nodes.append(helper.make_node("Conv", [x, "cw%d" % i, "cb%d" % i], [y], kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1], strides=[stride, stride]))
        if not relu:
            return y
        nodes.append(helper.make_node("Relu", [y], [y + "_relu"]))
        return y + "_relu"

    def block(x, ch):
        h = conv(conv(x, ch, ch, 1, True), ch, ch, 1, False)
        s = "sum%d" % counter[0]
        nodes.append(helper.make_node("Add", [h, x], [s]))
        nodes.append(helper.make_node("Relu", [s], [s + "_relu"]))
        return s + "_relu"

    x = conv("image", 3, 32, 2, True)
    for _ in range(3):
        x = block(x, 32)
    x = conv(x, 32, 64, 2, True)
    x = block(x, 64)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], axis=1))
    params["fw"] = he(rng, (64, 10), 64)
    params["fb"] = np.zeros(10, np.float32)
    nodes.append(helper.make_node("Gemm", ["flat", "fw", "fb"], ["logits"]))
    return finish("resnet", nodes,
                  [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 64, 64])],
                  [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], params)


def write_if_changed(path, data):
    if os.path.exists(path):
        with open(path, "rb") as f:
            if f.read() == data:
                return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rng = np.random.default_rng(SEED)
    for name, model, config in (("mlp", build_mlp(rng), MLP_CONFIG),
                                ("resnet", build_resnet(rng), RESNET_CONFIG)):
        write_if_changed(os.path.join(out, name, "1", "model.onnx"), model.SerializeToString())
        write_if_changed(os.path.join(out, name, "config.yaml"), config.encode())


if __name__ == "__main__":
    main()
