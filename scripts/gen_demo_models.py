#!/usr/bin/python3
"""Writes the demo model repository: an MLP and a small CNN.

usage: gen_demo_models.py OUT_DIR

Also defines `seq` (emit_seq): a per-position sequence model with a symbolic
`sequence` dimension served with padded_dims; tests/e2e/padding_test.py writes
it to its own repository, so the default demo repository stays mlp and cnn.

Produces, for m in (mlp, cnn):
  OUT_DIR/<m>/config.yaml
  OUT_DIR/<m>/1/model.onnx                      (opset 13, ir_version 8)
  OUT_DIR/<m>/1/test_data_set_0/input_0.pb      (batch 2, ONNX backend-test layout)
  OUT_DIR/<m>/1/test_data_set_0/output_0.pb     (from the numpy reference below)

Deterministic (fixed seed): a rerun produces byte-identical files, and a file
is only rewritten when its bytes change, so builds that run this every time
stay incremental. Prints nothing on success. Expected outputs come from the
plain-numpy reference implementations in this file, never from an engine.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 8
SEED = 7
TEST_BATCH = 2

CONFIG_YAML = """\
max_batch_size: 8
buckets: [1, 2, 4, 8]
dynamic_batching:
  max_queue_delay_us: 200
  max_queue_size: 256
instance_count: 1
"""


def weights(rng, shape):
    return rng.normal(0.0, 0.5, size=shape).astype(np.float32)


def make_model(name, nodes, inputs, outputs, params):
    graph = helper.make_graph(
        nodes,
        name,
        inputs,
        outputs,
        initializer=[numpy_helper.from_array(v, name=k) for k, v in params.items()],
    )
    model = helper.make_model(
        graph,
        producer_name="onyx-gen_demo_models",
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


# ------------------------------------------------------------------- MLP

def build_mlp(rng):
    p = {
        "W1": weights(rng, (16, 32)),
        "b1": weights(rng, (32,)),
        "W2": weights(rng, (16, 32)),  # Used with transB=1: y = x @ W2.T.
        "b2": weights(rng, (16,)),
        "W3": weights(rng, (16, 4)),
        "b3": weights(rng, (4,)),
    }
    nodes = [
        helper.make_node("MatMul", ["input", "W1"], ["mm1"], name="fc1_matmul"),
        helper.make_node("Add", ["mm1", "b1"], ["fc1"], name="fc1_add"),
        helper.make_node("Relu", ["fc1"], ["relu1"], name="relu1"),
        helper.make_node("Gemm", ["relu1", "W2", "b2"], ["fc2"], name="fc2", transB=1),
        helper.make_node("Relu", ["fc2"], ["relu2"], name="relu2"),
        helper.make_node("Gemm", ["relu2", "W3", "b3"], ["fc3"], name="fc3"),
        helper.make_node("Softmax", ["fc3"], ["probabilities"], name="softmax", axis=-1),
    ]
    model = make_model(
        "mlp",
        nodes,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 4])],
        p,
    )
    return model, p


def mlp_reference(p, x):
    x = x.astype(np.float64)
    h = np.maximum(x @ p["W1"] + p["b1"], 0.0)
    h = np.maximum(h @ p["W2"].T + p["b2"], 0.0)
    z = h @ p["W3"] + p["b3"]
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


# ------------------------------------------------------------------- CNN

def build_cnn(rng):
    p = {
        "conv1_W": weights(rng, (4, 1, 3, 3)),
        "conv1_B": weights(rng, (4,)),
        "conv2_W": weights(rng, (8, 4, 3, 3)),
        "conv2_B": weights(rng, (8,)),
        "fc_W": weights(rng, (8, 3)),
        "fc_b": weights(rng, (3,)),
    }
    nodes = [
        helper.make_node("Conv", ["image", "conv1_W", "conv1_B"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2_W", "conv2_B"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_W", "fc_b"], ["logits"], name="fc"),
    ]
    model = make_model(
        "cnn",
        nodes,
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 3])],
        p,
    )
    return model, p


def conv2d_same3x3(x, w, b):
    """Conv with 3x3 kernels, stride 1, pads 1 on every side; x is NCHW."""
    n, c, h, wd = x.shape
    m = w.shape[0]
    xp = np.zeros((n, c, h + 2, wd + 2), dtype=np.float64)
    xp[:, :, 1:h + 1, 1:wd + 1] = x
    y = np.zeros((n, m, h, wd), dtype=np.float64)
    for ni in range(n):
        for mi in range(m):
            for i in range(h):
                for j in range(wd):
                    acc = float(b[mi])
                    for ci in range(c):
                        for ki in range(3):
                            for kj in range(3):
                                acc += xp[ni, ci, i + ki, j + kj] * float(w[mi, ci, ki, kj])
                    y[ni, mi, i, j] = acc
    return y


def maxpool2x2(x):
    n, c, h, wd = x.shape
    y = np.zeros((n, c, h // 2, wd // 2), dtype=np.float64)
    for ni in range(n):
        for ci in range(c):
            for i in range(h // 2):
                for j in range(wd // 2):
                    y[ni, ci, i, j] = max(x[ni, ci, 2 * i + di, 2 * j + dj]
                                          for di in range(2) for dj in range(2))
    return y


def cnn_reference(p, x):
    h = np.maximum(conv2d_same3x3(x.astype(np.float64), p["conv1_W"], p["conv1_B"]), 0.0)
    h = maxpool2x2(h)
    h = np.maximum(conv2d_same3x3(h, p["conv2_W"], p["conv2_B"]), 0.0)
    g = h.mean(axis=(2, 3))  # GlobalAveragePool + Flatten.
    return (g @ p["fc_W"] + p["fc_b"]).astype(np.float32)


# ------------------------------------------------------------------- SEQ
#
# hidden[b, s, :] = tanh(E[input_ids[b, s]] @ W + c) * attention_mask[b, s]
# pooled[b, :]    = sum over s of hidden[b, s, :]
# Every position depends on its own token only, and pooled sums positions
# weighted by the mask, so padding with (input_ids 0, attention_mask 0) leaves
# the true positions of `hidden` and all of `pooled` unchanged.

SEQ_VOCAB = 32
SEQ_WIDTH = 8
SEQ_CONFIG_YAML = """\
max_batch_size: 4
buckets: [1, 2, 4]
dynamic_batching:
  max_queue_delay_us: 2000
padded_dims:
  sequence:
    sizes: [4, 8, 16]
    pad_values: {input_ids: 0, attention_mask: 0}
"""


def build_seq(rng):
    p = {
        "E": weights(rng, (SEQ_VOCAB, SEQ_WIDTH)),
        "W": weights(rng, (SEQ_WIDTH, SEQ_WIDTH)),
        "c": weights(rng, (SEQ_WIDTH,)),
        "axis2": np.array([2], dtype=np.int64),
        "axis1": np.array([1], dtype=np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["emb"], name="embed", axis=0),
        helper.make_node("MatMul", ["emb", "W"], ["mm"], name="proj"),
        helper.make_node("Add", ["mm", "c"], ["pre"], name="bias"),
        helper.make_node("Tanh", ["pre"], ["act"], name="tanh"),
        helper.make_node("Unsqueeze", ["attention_mask", "axis2"], ["mask3"], name="mask3"),
        helper.make_node("Mul", ["act", "mask3"], ["hidden"], name="masked"),
        helper.make_node("ReduceSum", ["hidden", "axis1"], ["pooled"], name="pool", keepdims=0),
    ]
    model = make_model(
        "seq",
        nodes,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT,
                                       ["batch", "sequence"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT,
                                       ["batch", "sequence", SEQ_WIDTH]),
         helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", SEQ_WIDTH])],
        p,
    )
    return model, p


def seq_reference(p, input_ids, attention_mask):
    """(hidden, pooled) for unpadded inputs of shape [batch, length]."""
    act = np.tanh(p["E"].astype(np.float64)[input_ids] @ p["W"] + p["c"])
    hidden = act * attention_mask.astype(np.float64)[:, :, None]
    return hidden.astype(np.float32), hidden.sum(axis=1).astype(np.float32)


def emit_seq(out_dir):
    """Writes OUT_DIR/seq/{config.yaml,1/model.onnx}; returns the parameters."""
    model, p = build_seq(np.random.default_rng(SEED))
    write_if_changed(os.path.join(out_dir, "seq", "config.yaml"), SEQ_CONFIG_YAML)
    write_if_changed(os.path.join(out_dir, "seq", "1", "model.onnx"), model.SerializeToString())
    return p


# ---------------------------------------------------------------- output

def write_if_changed(path, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def emit(out_dir, name, model, input_name, x, output_name, y):
    mdir = os.path.join(out_dir, name)
    vdir = os.path.join(mdir, "1")
    tdir = os.path.join(vdir, "test_data_set_0")
    write_if_changed(os.path.join(mdir, "config.yaml"), CONFIG_YAML)
    write_if_changed(os.path.join(vdir, "model.onnx"), model.SerializeToString())
    write_if_changed(os.path.join(tdir, "input_0.pb"),
                     numpy_helper.from_array(x, name=input_name).SerializeToString())
    write_if_changed(os.path.join(tdir, "output_0.pb"),
                     numpy_helper.from_array(y, name=output_name).SerializeToString())


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: gen_demo_models.py OUT_DIR\n")
        return 2
    out_dir = argv[1]
    rng = np.random.default_rng(SEED)

    # Draw order is part of the output: weights first, then test inputs.
    mlp, mlp_p = build_mlp(rng)
    cnn, cnn_p = build_cnn(rng)
    mlp_x = rng.normal(0.0, 1.0, size=(TEST_BATCH, 16)).astype(np.float32)
    cnn_x = rng.normal(0.0, 1.0, size=(TEST_BATCH, 1, 8, 8)).astype(np.float32)

    emit(out_dir, "mlp", mlp, "input", mlp_x, "probabilities", mlp_reference(mlp_p, mlp_x))
    emit(out_dir, "cnn", cnn, "image", cnn_x, "logits", cnn_reference(cnn_p, cnn_x))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
