#!/usr/bin/python3
"""Writes the models whose expected outputs come from ONNX Runtime (issue-level
agreement cases), in the ONNX backend-test layout:

    cases/<case>/model.onnx, cases/<case>/test_data_set_0/input_0.pb, meta.json

then record_ort.js (tests/conformance/) adds output_N.pb. The cases
and ONNX Runtime's outputs are committed; CI only runs them
(ort_cases_test.py). Rerun both after changing a case:

    /usr/bin/python3 tests/models/ort_cases/gen_cases.py tests/models/ort_cases/cases
    node tests/conformance/record_ort.js tests/models/ort_cases/cases NODE_MODULES_DIR

Cases:
  cnn_fp16_weights   a torch-exported CNN (conv, batch norm, depthwise conv,
                     squeeze-excite, SiLU, pooling, linear) whose float weights
                     are stored as float16 behind Cast nodes, as size-reduced
                     exports ship them
  cnn_fp16           the same CNN entirely in float16 (inputs, weights, outputs)
  cnn_shuffled       the float CNN with its nodes in a shuffled order
  cnn_external_data  the float CNN with every weight in one external file
  dq_chain_100_int8  100 layers of DynamicQuantizeLinear -> ConvInteger ->
  dq_chain_100_uint8 Cast -> Mul -> Add -> Relu, as ONNX Runtime's dynamic
                     quantization writes them (int8 or uint8 weights):
                     must equal ONNX Runtime's output exactly
  dq_matmul_chain_50_int8, _uint8: the same for 50 MatMulInteger layers
  qlinear_conv_chain_12  12 QLinearConv layers (QOperator form; strided,
                     depthwise, grouped and 1x1): must equal ONNX Runtime exactly
  qlinear_matmul_chain_12  12 QLinearMatMul layers (3-D A, per-column int8
                     weight scales): must equal ONNX Runtime exactly
  qdq_conv_chain_20  20 statically quantized Conv layers in QDQ form (uint8
                     activations, per-channel int8 weights)
  qdq_matmul_fused_12  12 QDQ MatMuls (per-column int8 weights) recorded with
                     ONNX Runtime's optimizations on (it runs QLinearMatMul)
  qdq_conv_fused_20  the same in the form engines fuse (Relu outputs quantized
                     with zero point 0, int32 biases), recorded with ONNX
                     Runtime's optimizations on; onyx at level `all` must equal it
meta.json holds the comparison tolerance, |onyx - ort| <= atol + rtol * |ort|,
and optionally "levels" (the onyx optimization levels to check; default all
and disabled) and "ort_optimization" ("all": recorded with ONNX Runtime's
graph optimizations on).
"""
import json
import os
import random
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "compare_ort"))
import quantize_dynamic  # noqa: E402


def write_case(root, name, model, inputs, meta, external=False):
    case = os.path.join(root, name)
    shutil.rmtree(case, ignore_errors=True)
    os.makedirs(os.path.join(case, "test_data_set_0"))
    if external:
        onnx.save(model, os.path.join(case, "model.onnx"), save_as_external_data=True,
                  all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    else:
        onnx.save(model, os.path.join(case, "model.onnx"))
    for i, (input_name, array) in enumerate(inputs):
        with open(os.path.join(case, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(array, input_name).SerializeToString())
    with open(os.path.join(case, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def torch_cnn():
    """A small mobile-style CNN exported by torch at opset 13, with trained-looking
    batch-norm statistics so that no layer is an identity."""
    import torch
    from torch import nn

    torch.manual_seed(3)

    class SqueezeExcite(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.fc1 = nn.Conv2d(c, c // 4, 1)
            self.fc2 = nn.Conv2d(c // 4, c, 1)

        def forward(self, x):
            s = x.mean((2, 3), keepdim=True)
            return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))

    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.SiLU(),
        nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.BatchNorm2d(16), nn.ReLU6(),
        SqueezeExcite(16),
        nn.Conv2d(16, 32, 1), nn.BatchNorm2d(32), nn.SiLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    net.eval()
    x = torch.randn(1, 3, 32, 32)
    path = os.path.join(HERE, ".cnn_export.onnx")
    torch.onnx.export(net, x, path, opset_version=13, input_names=["image"], output_names=["logits"],
                      do_constant_folding=True)
    model = onnx.load(path)
    os.remove(path)
    return model, x.numpy()


def weights_behind_casts(model):
    """Every float initializer becomes float16, read through Cast(to=float)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    casts, inits = [], []
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT and len(init.dims) > 0:
            half = numpy_helper.to_array(init).astype(np.float16)
            inits.append(numpy_helper.from_array(half, init.name + "_fp16"))
            casts.append(helper.make_node("Cast", [init.name + "_fp16"], [init.name], to=TensorProto.FLOAT,
                                          name="cast_" + init.name))
        else:
            inits.append(init)
    del g.initializer[:]
    g.initializer.extend(inits)
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(casts + nodes)
    return m


def whole_float16(model):
    """Inputs, weights, outputs and every float computation in float16."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    for node in g.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
    return m


def shuffled(model, seed):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    nodes = list(m.graph.node)
    random.Random(seed).shuffle(nodes)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m


def conv_chain(layers, seed):
    """x -> (Conv 3x3 + bias -> Relu) x layers, 8 channels at 16x16, He-scaled
    weights so that activations neither vanish nor explode."""
    rng = np.random.default_rng(seed)
    c, hw = 8, 16
    nodes, inits, cur = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((c, c, 3, 3)) * np.sqrt(2.0 / (c * 9))).astype(np.float32)
        b = (rng.standard_normal(c) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w%d" % i), numpy_helper.from_array(b, "b%d" % i)]
        nodes.append(helper.make_node("Conv", [cur, "w%d" % i, "b%d" % i], ["c%d" % i], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", ["c%d" % i], ["r%d" % i]))
        cur = "r%d" % i
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    graph = helper.make_graph(nodes, "conv_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, hw, hw])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        rng.standard_normal((1, c, hw, hw)).astype(np.float32)


def matmul_chain(layers, seed, weight_type):
    """x [1, 16, 64] -> (dynamically quantized MatMul 64x64 + bias -> Relu) x
    layers, written as ONNX Runtime's quantize_dynamic writes MatMul:
    DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(x_scale * w_scale) -> Add."""
    rng = np.random.default_rng(seed)
    d = 64
    nodes, inits, cur = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((d, d)) * np.sqrt(2.0 / d)).astype(np.float32)
        b = (rng.standard_normal(d) * 0.1).astype(np.float32)
        w_q, w_scale, w_zp = quantize_dynamic.quantize_weight(w, weight_type)
        inits += [numpy_helper.from_array(w_q, "w%d_q" % i), numpy_helper.from_array(w_scale.reshape(()), "w%d_scale" % i),
                  numpy_helper.from_array(w_zp.reshape(()), "w%d_zp" % i), numpy_helper.from_array(b, "b%d" % i)]
        q = ["x%d_q" % i, "x%d_scale" % i, "x%d_zp" % i]
        nodes += [helper.make_node("DynamicQuantizeLinear", [cur], q),
                  helper.make_node("MatMulInteger", [q[0], "w%d_q" % i, q[2], "w%d_zp" % i], ["mm%d" % i]),
                  helper.make_node("Cast", ["mm%d" % i], ["mmf%d" % i], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [q[1], "w%d_scale" % i], ["s%d" % i]),
                  helper.make_node("Mul", ["mmf%d" % i, "s%d" % i], ["y%d" % i]),
                  helper.make_node("Add", ["y%d" % i, "b%d" % i], ["a%d" % i]),
                  helper.make_node("Relu", ["a%d" % i], ["r%d" % i])]
        cur = "r%d" % i
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    graph = helper.make_graph(nodes, "matmul_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        rng.standard_normal((1, 16, d)).astype(np.float32)


def qdq_conv_chain(layers, seed, relu_zero_point_zero=False):
    """Static quantization in QDQ form, as ONNX Runtime's quantize_static writes
    it: activations QuantizeLinear -> DequantizeLinear (uint8, per tensor),
    weights int8 initializers behind DequantizeLinear (per output channel,
    axis 0), float Conv + bias + Relu in between. With relu_zero_point_zero
    every quantized activation after the first is a Relu output with zero
    point 0 and the bias is an int32 DequantizeLinear, the groups an engine
    fuses into QLinearConv. Returns the model, the input and the largest
    activation scale (one quantization step)."""
    rng = np.random.default_rng(seed)
    c, hw = 8, 12
    nodes, inits, cur = [], [], "x"
    step = 0.0
    for i in range(layers):
        a_scale = np.float32(0.02 + 0.01 * rng.random())
        a_zp = np.uint8(0 if relu_zero_point_zero and i > 0 else rng.integers(100, 140))
        step = max(step, float(a_scale))
        inits += [numpy_helper.from_array(np.array(a_scale, np.float32), "as%d" % i),
                  numpy_helper.from_array(np.array(a_zp, np.uint8), "az%d" % i)]
        nodes += [helper.make_node("QuantizeLinear", [cur, "as%d" % i, "az%d" % i], ["q%d" % i]),
                  helper.make_node("DequantizeLinear", ["q%d" % i, "as%d" % i, "az%d" % i], ["dq%d" % i])]
        w = (rng.standard_normal((c, c, 3, 3)) * np.sqrt(2.0 / (c * 9))).astype(np.float32)
        w_scale = (np.abs(w).reshape(c, -1).max(axis=1) / 127).astype(np.float32)
        w_q = np.clip(np.rint(w / w_scale.reshape(c, 1, 1, 1)), -127, 127).astype(np.int8)
        inits += [numpy_helper.from_array(w_q, "wq%d" % i), numpy_helper.from_array(w_scale, "ws%d" % i),
                  numpy_helper.from_array(np.zeros(c, np.int8), "wz%d" % i)]
        b = (rng.standard_normal(c) * 0.1).astype(np.float32)
        if relu_zero_point_zero:
            b_scale = (a_scale * w_scale).astype(np.float32)
            inits += [numpy_helper.from_array(np.rint(b / b_scale).astype(np.int32), "bq%d" % i),
                      numpy_helper.from_array(b_scale, "bs%d" % i)]
            nodes.append(helper.make_node("DequantizeLinear", ["bq%d" % i, "bs%d" % i], ["b%d" % i], axis=0))
        else:
            inits.append(numpy_helper.from_array(b, "b%d" % i))
        nodes += [helper.make_node("DequantizeLinear", ["wq%d" % i, "ws%d" % i, "wz%d" % i], ["w%d" % i], axis=0),
                  helper.make_node("Conv", ["dq%d" % i, "w%d" % i, "b%d" % i], ["c%d" % i], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c%d" % i], ["r%d" % i])]
        cur = "r%d" % i
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    graph = helper.make_graph(nodes, "qdq_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, hw, hw])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return model, rng.standard_normal((1, c, hw, hw)).astype(np.float32), step


def qlinear_conv_chain(seed):
    """A QOperator-format network, as older int8 model-zoo exports are written:
    QuantizeLinear -> QLinearConv x 12 (3x3, strided, depthwise and 1x1 layers;
    uint8 activations, per-channel int8 weights, int32 biases; each layer's
    output scale and zero point taken from the float activations' range)
    -> DequantizeLinear. Both engines accumulate in int32 and requantize the
    same way, so the outputs must be equal."""
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(seed)
    layers = [(8, 16, 3, 1, 1), (16, 16, 3, 2, 16), (16, 24, 1, 1, 1), (24, 24, 3, 1, 24), (24, 24, 1, 1, 1),
              (24, 32, 3, 2, 1), (32, 32, 3, 1, 32), (32, 16, 1, 1, 1), (16, 16, 3, 1, 1), (16, 16, 3, 1, 4),
              (16, 8, 1, 1, 1), (8, 8, 3, 1, 1)]
    x = rng.standard_normal((1, 8, 20, 20)).astype(np.float32)

    def qparams(a):
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        scale = np.float32((hi - lo) / 255.0 or 1.0)
        return scale, np.uint8(np.clip(np.rint(-lo / scale), 0, 255))

    nodes, inits = [], []
    x_scale, x_zp = qparams(x)
    inits += [numpy_helper.from_array(np.array(x_scale), "s_in"), numpy_helper.from_array(np.array(x_zp), "z_in")]
    nodes.append(helper.make_node("QuantizeLinear", ["x", "s_in", "z_in"], ["q_in"]))
    act = torch.from_numpy(x)
    cur, cur_s, cur_z = "q_in", "s_in", "z_in"
    for i, (cin, cout, k, stride, group) in enumerate(layers):
        w = (rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        w_scale = (np.abs(w).reshape(cout, -1).max(axis=1) / 127).astype(np.float32)
        w_q = np.clip(np.rint(w / w_scale.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
        b_q = np.rint(b / (x_scale * w_scale)).astype(np.int32)
        act = F.relu(F.conv2d(act, torch.from_numpy(w), torch.from_numpy(b), stride=stride, padding=k // 2,
                              groups=group))
        y_scale, y_zp = qparams(act.numpy())
        names = ["w%d" % i, "ws%d" % i, "wz%d" % i, "ys%d" % i, "yz%d" % i, "b%d" % i]
        inits += [numpy_helper.from_array(w_q, names[0]), numpy_helper.from_array(w_scale, names[1]),
                  numpy_helper.from_array(np.zeros(cout, np.int8), names[2]),
                  numpy_helper.from_array(np.array(y_scale), names[3]), numpy_helper.from_array(np.array(y_zp), names[4]),
                  numpy_helper.from_array(b_q, names[5])]
        nodes.append(helper.make_node("QLinearConv", [cur, cur_s, cur_z] + names[:3] + names[3:5] + [names[5]],
                                      ["q%d" % i], pads=[k // 2] * 4, strides=[stride, stride], group=group,
                                      kernel_shape=[k, k]))
        cur, cur_s, cur_z, x_scale = "q%d" % i, names[3], names[4], y_scale
    nodes.append(helper.make_node("DequantizeLinear", [cur, cur_s, cur_z], ["y"]))
    out_shape = list(act.shape)
    graph = helper.make_graph(nodes, "qlinear_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 20, 20])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), x


def qlinear_matmul_chain(layers, seed):
    """QLinearMatMul x layers over x [2, 8, 48] (uint8 activations, int8
    weights with per-column scales; 3-D A against 2-D B), between a
    QuantizeLinear and a DequantizeLinear: int32 products requantized the same
    way in both engines, so equal outputs."""
    rng = np.random.default_rng(seed)
    d = 48
    x = rng.standard_normal((2, 8, d)).astype(np.float32)

    def qparams(a):
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        scale = np.float32((hi - lo) / 255.0 or 1.0)
        return scale, np.uint8(np.clip(np.rint(-lo / scale), 0, 255))

    s, z = qparams(x)
    inits = [numpy_helper.from_array(np.array(s), "s_in"), numpy_helper.from_array(np.array(z), "z_in")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s_in", "z_in"], ["q_in"])]
    act, cur = x, ["q_in", "s_in", "z_in"]
    for i in range(layers):
        w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
        w_scale = (np.abs(w).max(axis=0) / 127).astype(np.float32)
        w_q = np.clip(np.rint(w / w_scale), -127, 127).astype(np.int8)
        act = np.maximum(act @ w, 0) if i % 2 else act @ w
        y_s, y_z = qparams(act)
        names = ["w%d" % i, "ws%d" % i, "wz%d" % i, "ys%d" % i, "yz%d" % i]
        inits += [numpy_helper.from_array(w_q, names[0]), numpy_helper.from_array(w_scale, names[1]),
                  numpy_helper.from_array(np.zeros(d, np.int8), names[2]), numpy_helper.from_array(np.array(y_s), names[3]),
                  numpy_helper.from_array(np.array(y_z), names[4])]
        nodes.append(helper.make_node("QLinearMatMul", cur + names, ["q%d" % i]))
        cur = ["q%d" % i, names[3], names[4]]
    nodes.append(helper.make_node("DequantizeLinear", cur, ["y"]))
    graph = helper.make_graph(nodes, "qlinear_matmul_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), x


def qdq_matmul_chain(layers, seed):
    """QDQ-form MatMuls, as quantize_static writes a quantized transformer's
    projections: Q -> DQ (uint8 activations) -> MatMul with int8 weights
    behind DequantizeLinear (per-column scales, axis 1) -> Q -> ... -> DQ.
    Every MatMul is read by its QuantizeLinear only: the groups engines fuse
    into QLinearMatMul."""
    rng = np.random.default_rng(seed)
    d = 40
    x = rng.standard_normal((1, 6, d)).astype(np.float32)
    nodes, inits, act = [], [], x
    cur = "x"
    for i in range(layers):
        lo, hi = min(float(act.min()), 0.0), max(float(act.max()), 0.0)
        s = np.float32((hi - lo) / 255.0)
        z = np.uint8(np.clip(np.rint(-lo / s), 0, 255))
        w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
        w_scale = (np.abs(w).max(axis=0) / 127).astype(np.float32)
        w_q = np.clip(np.rint(w / w_scale), -127, 127).astype(np.int8)
        inits += [numpy_helper.from_array(np.array(s), "s%d" % i), numpy_helper.from_array(np.array(z), "z%d" % i),
                  numpy_helper.from_array(w_q, "wq%d" % i), numpy_helper.from_array(w_scale, "ws%d" % i),
                  numpy_helper.from_array(np.zeros(d, np.int8), "wz%d" % i)]
        nodes += [helper.make_node("QuantizeLinear", [cur, "s%d" % i, "z%d" % i], ["q%d" % i]),
                  helper.make_node("DequantizeLinear", ["q%d" % i, "s%d" % i, "z%d" % i], ["dq%d" % i]),
                  helper.make_node("DequantizeLinear", ["wq%d" % i, "ws%d" % i, "wz%d" % i], ["w%d" % i], axis=1),
                  helper.make_node("MatMul", ["dq%d" % i, "w%d" % i], ["m%d" % i])]
        act = act @ w
        cur = "m%d" % i
    lo, hi = min(float(act.min()), 0.0), max(float(act.max()), 0.0)
    s = np.float32((hi - lo) / 255.0)
    inits += [numpy_helper.from_array(np.array(s), "s_out"),
              numpy_helper.from_array(np.array(np.uint8(np.clip(np.rint(-lo / s), 0, 255))), "z_out")]
    nodes += [helper.make_node("QuantizeLinear", [cur, "s_out", "z_out"], ["q_out"]),
              helper.make_node("DequantizeLinear", ["q_out", "s_out", "z_out"], ["y"])]
    graph = helper.make_graph(nodes, "qdq_matmul_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), x


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "cases")
    os.makedirs(root, exist_ok=True)
    cnn, x = torch_cnn()
    name = cnn.graph.input[0].name
    write_case(root, "cnn_fp16_weights", weights_behind_casts(cnn), [(name, x)], {"atol": 1e-5, "rtol": 1e-4})
    # float16 rounds every intermediate to 11 bits, and ONNX Runtime's
    # float16 kernels round at other points than onyx's (which compute in
    # float and round each op's output): a few float16 ulps.
    write_case(root, "cnn_fp16", whole_float16(cnn), [(name, x.astype(np.float16))], {"atol": 2e-3, "rtol": 4e-3})
    write_case(root, "cnn_shuffled", shuffled(cnn, 11), [(name, x)], {"atol": 1e-5, "rtol": 1e-4})
    write_case(root, "cnn_external_data", cnn, [(name, x)], {"atol": 1e-5, "rtol": 1e-4}, external=True)
    qlinear, lx = qlinear_conv_chain(seed=13)
    write_case(root, "qlinear_conv_chain_12", qlinear, [("x", lx)], {"atol": 0.0, "rtol": 0.0})
    qdq_mm, dx = qdq_matmul_chain(12, seed=23)
    write_case(root, "qdq_matmul_fused_12", qdq_mm, [("x", dx)],
               {"atol": 0.0, "rtol": 0.0, "ort_optimization": "all", "levels": ["all"]})
    qmm, mx = qlinear_matmul_chain(12, seed=17)
    write_case(root, "qlinear_matmul_chain_12", qmm, [("x", mx)], {"atol": 0.0, "rtol": 0.0})
    qdq, qx, step = qdq_conv_chain(20, seed=9)
    # Both engines run the float convolutions between Q/DQ pairs; a float
    # result within an ulp of a rounding midpoint may land one step apart.
    write_case(root, "qdq_conv_chain_20", qdq, [("x", qx)], {"atol": 1.01 * step, "rtol": 0.0})
    # The fusable form against ONNX Runtime with its optimizations on (it runs
    # each group as QLinearConv): onyx's fused groups must give its output
    # (the last Conv, not followed by a QuantizeLinear, is float: ulps).
    fused, fx, _ = qdq_conv_chain(20, seed=21, relu_zero_point_zero=True)
    write_case(root, "qdq_conv_fused_20", fused, [("x", fx)],
               {"atol": 1e-6, "rtol": 1e-6, "ort_optimization": "all", "levels": ["all"]})
    for weight_type in ("int8", "uint8"):
        chain, cx = conv_chain(100, seed=7)
        q = quantize_dynamic.quantize_model(chain, weight_type=weight_type)
        write_case(root, "dq_chain_100_" + weight_type, q, [("x", cx)], {"atol": 0.0, "rtol": 0.0})
        chain, mx = matmul_chain(50, seed=5, weight_type=weight_type)
        write_case(root, "dq_matmul_chain_50_" + weight_type, chain, [("x", mx)], {"atol": 0.0, "rtol": 0.0})


if __name__ == "__main__":
    main()
