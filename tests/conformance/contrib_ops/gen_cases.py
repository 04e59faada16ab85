#!/usr/bin/python3
"""Writes the com.microsoft contrib-operator cases in the ONNX backend-test layout.

    /usr/bin/python3 tests/conformance/contrib_ops/gen_cases.py OUT_DIR
    /usr/bin/python3 tests/conformance/contrib_ops/gen_cases.py --set-output-shapes OUT_DIR

OUT_DIR/<case>/model.onnx and OUT_DIR/<case>/test_data_set_0/input_N.pb, one
or more cases per operator: attributes, broadcasting, masks and odd sizes. The
expected outputs are not computed here: record_ort.js runs every case through
ONNX Runtime and writes output_N.pb; --set-output-shapes then declares the
recorded output shapes in each model (the ONNX checker requires graph outputs
to have a shape). ../regenerate_ort_cases.sh runs all three.

Where ONNX Runtime's CPU provider has no kernel for a form (BiasAdd; the 4-D
Megatron attention mask), the case also holds reference.onnx, an equivalent
graph of operators ONNX Runtime runs (Add + Add; the same mask in 3-D), with
the same inputs and outputs; record_ort.js records that graph's outputs.

Models are built with onnx.helper; onnx 1.12 has no com.microsoft schemas, so
nothing is checked here (ONNX Runtime's loader is the check). Every case draws
its data from a generator seeded with its own name, so regenerating writes the
same bytes.
"""
import os
import shutil
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE

MS = "com.microsoft"
F32, I32, I64, U8, I8 = np.float32, np.int32, np.int64, np.uint8, np.int8

CASES = {}  # name -> (model, [input arrays], reference model or None)


class C:
    """A node input held as an initializer rather than fed."""

    def __init__(self, name, value):
        self.name, self.value = name, np.asarray(value)


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(r, shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(F32)


def make_model(name, nodes, inputs, outputs, initializers, opset):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape) for n, v in inputs],
        [helper.make_tensor_value_info(n, NP_TYPE_TO_TENSOR_TYPE[np.dtype(t)], None) for n, t in outputs],
        [numpy_helper.from_array(i.value, i.name) for i in initializers])
    model = helper.make_model(graph, producer_name="onyx-contrib-cases",
                              opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return model


def add(name, op, ins, outs, domain=MS, opset=17, reference=None, **attrs):
    """One node. ins: (name, array) fed, C(name, array) initializer, None omitted.
    outs: [(name, dtype)] graph outputs, or None for an omitted optional output,
    or a dtype for a single output 'y'. reference: nodes computing the same
    outputs from the same inputs with operators ONNX Runtime runs on CPU."""
    assert name not in CASES, name
    if not isinstance(outs, list):
        outs = [("y", outs)]
    fed = [i for i in ins if isinstance(i, tuple)]
    inits = [i for i in ins if isinstance(i, C)]
    in_names = [i[0] if isinstance(i, tuple) else i.name if isinstance(i, C) else "" for i in ins]
    out_names = [o[0] if o else "" for o in outs]
    while in_names and in_names[-1] == "":
        in_names.pop()
    graph_outs = [o for o in outs if o]
    node = helper.make_node(op, in_names, out_names, domain=domain, **attrs)
    model = make_model(name, [node], fed, graph_outs, inits, opset)
    ref = make_model(name, reference, fed, graph_outs, inits, opset) if reference else None
    CASES[name] = (model, [np.asarray(v) for _, v in fed], ref)


def add_graph(name, nodes, ins, outs, opset=17):
    """A graph of several nodes; ins and outs as for add()."""
    assert name not in CASES, name
    fed = [i for i in ins if isinstance(i, tuple)]
    inits = [i for i in ins if isinstance(i, C)]
    CASES[name] = (make_model(name, nodes, fed, outs, inits, opset), [np.asarray(v) for _, v in fed], None)


def ms(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, domain=MS, **attrs)


def write(out_dir):
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    for name, (model, inputs, ref) in sorted(CASES.items()):
        case_dir = os.path.join(out_dir, name)
        data_dir = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(data_dir)
        onnx.save(model, os.path.join(case_dir, "model.onnx"))
        if ref is not None:
            onnx.save(ref, os.path.join(case_dir, "reference.onnx"))
        for i, value in enumerate(inputs):
            tensor = numpy_helper.from_array(value, model.graph.input[i].name)
            with open(os.path.join(data_dir, f"input_{i}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())


# --- activations -------------------------------------------------------------

def gen_activations():
    r = rng("gelu")
    add("test_ms_gelu", "Gelu", [("x", normal(r, (2, 3, 5), 2))], F32)
    add("test_ms_gelu_odd_1d", "Gelu", [("x", normal(r, (37,), 3))], F32)
    r = rng("fastgelu")
    add("test_ms_fastgelu", "FastGelu", [("x", normal(r, (2, 3, 7), 2))], F32)
    add("test_ms_fastgelu_bias", "FastGelu", [("x", normal(r, (2, 5, 6), 2)), C("b", normal(r, (6,)))], F32)
    add("test_ms_fastgelu_bias_fed", "FastGelu", [("x", normal(r, (3, 9), 2)), ("b", normal(r, (9,)))], F32)
    r = rng("biasgelu")
    add("test_ms_biasgelu", "BiasGelu", [("a", normal(r, (3, 4, 5), 2)), C("b", normal(r, (5,)))], F32)
    add("test_ms_biasgelu_2d", "BiasGelu", [("a", normal(r, (7, 11), 2)), ("b", normal(r, (11,)))], F32)
    r = rng("quickgelu")
    add("test_ms_quickgelu", "QuickGelu", [("x", normal(r, (2, 3, 8), 3))], F32)
    add("test_ms_quickgelu_alpha", "QuickGelu", [("x", normal(r, (5, 7), 3))], F32, alpha=1.0)
    r = rng("biasadd")
    x, b, s = normal(r, (2, 6, 8)), normal(r, (8,)), normal(r, (2, 6, 8))
    add("test_ms_biasadd", "BiasAdd", [("x", x), C("bias", b), ("skip", s)], F32,
        reference=[helper.make_node("Add", ["x", "bias"], ["xb"]), helper.make_node("Add", ["xb", "skip"], ["y"])])
    x, b, s = normal(r, (1, 5, 3)), normal(r, (3,)), normal(r, (1, 5, 3))
    add("test_ms_biasadd_odd", "BiasAdd", [("x", x), ("bias", b), ("skip", s)], F32,
        reference=[helper.make_node("Add", ["x", "bias"], ["xb"]), helper.make_node("Add", ["xb", "skip"], ["y"])])


# --- fused products ----------------------------------------------------------

def gen_fused_matmul():
    r = rng("fusedmatmul")
    add("test_ms_fusedmatmul_2d", "FusedMatMul", [("a", normal(r, (3, 4))), ("b", normal(r, (4, 5)))], F32)
    add("test_ms_fusedmatmul_trans_alpha", "FusedMatMul", [("a", normal(r, (4, 3))), ("b", normal(r, (5, 4)))], F32,
        transA=1, transB=1, alpha=0.5)
    add("test_ms_fusedmatmul_broadcast", "FusedMatMul", [("a", normal(r, (2, 1, 3, 4))), ("b", normal(r, (3, 4, 5)))],
        F32, alpha=2.0)
    add("test_ms_fusedmatmul_transb_batched", "FusedMatMul",
        [("a", normal(r, (2, 3, 6))), ("b", normal(r, (2, 5, 6)))], F32, transB=1)
    add("test_ms_fusedmatmul_vector_b", "FusedMatMul", [("a", normal(r, (2, 3, 4))), ("b", normal(r, (4,)))], F32)
    add("test_ms_fusedmatmul_transbatch_a", "FusedMatMul",
        [("a", normal(r, (3, 2, 4))), ("b", normal(r, (2, 4, 5)))], F32, transBatchA=1)
    add("test_ms_fusedmatmul_transbatch_b_transb", "FusedMatMul",
        [("a", normal(r, (2, 3, 4))), ("b", normal(r, (5, 2, 4)))], F32, transBatchB=1, transB=1)
    add("test_ms_fusedmatmul_transbatch_both_4d", "FusedMatMul",
        [("a", normal(r, (4, 2, 3, 5))), ("b", normal(r, (4, 2, 3, 6)))], F32, transBatchA=1, transA=1,
        transBatchB=1)
    add("test_ms_fusedmatmul_const_b", "FusedMatMul", [("a", normal(r, (2, 7, 16))), C("b", normal(r, (16, 9)))], F32,
        alpha=0.25)
    add("test_ms_fusedmatmul_const_b_transb", "FusedMatMul",
        [("a", normal(r, (5, 12))), C("b", normal(r, (10, 12)))], F32, transB=1, alpha=1.5)
    add("test_ms_fusedmatmul_const_b_transa", "FusedMatMul",
        [("a", normal(r, (12, 5))), C("b", normal(r, (12, 10)))], F32, transA=1)


def gen_fused_conv():
    r = rng("fusedconv")
    x = normal(r, (1, 4, 7, 6))
    w = normal(r, (6, 4, 3, 3), 0.3)
    b = normal(r, (6,))
    add("test_ms_fusedconv_relu", "FusedConv", [("x", x), C("w", w), C("b", b)], F32, activation="Relu",
        pads=[1, 1, 1, 1])
    add("test_ms_fusedconv_sum_relu", "FusedConv",
        [("x", x), C("w", w), C("b", b), ("z", normal(r, (1, 6, 7, 6)))], F32, activation="Relu", pads=[1, 1, 1, 1])
    add("test_ms_fusedconv_leakyrelu", "FusedConv", [("x", x), C("w", w)], F32, activation="LeakyRelu",
        activation_params=[0.2], strides=[2, 2])
    add("test_ms_fusedconv_clip", "FusedConv", [("x", x), C("w", w), C("b", b)], F32, activation="Clip",
        activation_params=[-0.5, 1.0])
    add("test_ms_fusedconv_hardsigmoid", "FusedConv", [("x", x), C("w", w), C("b", b)], F32,
        activation="HardSigmoid", activation_params=[0.2, 0.5], dilations=[2, 1])
    add("test_ms_fusedconv_sigmoid", "FusedConv", [("x", x), C("w", w), C("b", b)], F32, activation="Sigmoid",
        auto_pad="SAME_UPPER")
    add("test_ms_fusedconv_tanh_group", "FusedConv",
        [("x", normal(r, (2, 6, 5, 5))), C("w", normal(r, (6, 2, 3, 3), 0.3)), C("b", b)], F32,
        activation="Tanh", group=3)
    add("test_ms_fusedconv_no_activation_1d", "FusedConv",
        [("x", normal(r, (1, 3, 11))), C("w", normal(r, (5, 3, 4), 0.3))], F32)
    # A chain of them, which onyx runs channels-last (NhwcConv) end to end.
    w8 = C("w8", normal(r, (8, 8, 3, 3), 0.2))
    add_graph("test_ms_fusedconv_chain_channels_last", [
        ms("FusedConv", ["x", "w8"], ["a"], activation="Relu", pads=[1, 1, 1, 1]),
        ms("FusedConv", ["a", "w8"], ["b"], activation="Tanh", pads=[1, 1, 1, 1]),
        ms("FusedConv", ["b", "w8", "", "a"], ["y"], activation="LeakyRelu", activation_params=[0.1],
           pads=[1, 1, 1, 1]),
    ], [("x", normal(r, (1, 8, 9, 10))), w8], [("y", F32)])
    add("test_ms_fusedconv_fed_weights", "FusedConv",
        [("x", x), ("w", w), ("b", b), ("z", normal(r, (1, 6, 5, 4)))], F32, activation="Relu")


def gen_fused_gemm():
    r = rng("fusedgemm")
    a, b, c = normal(r, (3, 5), 2), normal(r, (5, 4)), normal(r, (4,))
    cases = [
        ("relu", "Relu", {}),
        ("leakyrelu", "LeakyRelu", {"activation_alpha": 0.1}),
        ("sigmoid", "Sigmoid", {}),
        ("tanh", "Tanh", {}),
        ("hardsigmoid", "HardSigmoid", {"activation_alpha": 0.3, "activation_beta": 0.4}),
        ("elu", "Elu", {"activation_alpha": 0.7}),
        ("selu", "Selu", {"activation_alpha": 1.6, "activation_gamma": 1.05}),
        ("softplus", "Softplus", {}),
        ("softsign", "Softsign", {}),
        ("thresholdedrelu", "ThresholdedRelu", {"activation_alpha": 0.5}),
        ("scaledtanh", "ScaledTanh", {"activation_alpha": 2.0, "activation_beta": 0.5}),
        ("parametricsoftplus", "ParametricSoftplus", {"activation_alpha": 2.0, "activation_beta": 0.5}),
        ("celu", "Celu", {"activation_alpha": 0.5}),
    ]
    for suffix, act, attrs in cases:
        add(f"test_ms_fusedgemm_{suffix}", "FusedGemm", [("a", a), C("b", b), C("c", c)], F32, activation=act,
            **attrs)
    add("test_ms_fusedgemm_trans_alpha_beta", "FusedGemm",
        [("a", normal(r, (5, 3))), ("b", normal(r, (4, 5))), ("c", normal(r, (3, 1)))], F32, activation="Relu",
        transA=1, transB=1, alpha=0.5, beta=2.0)


# --- normalization -----------------------------------------------------------

SKIP_OUTS = [("output", F32), ("mean", F32), ("inv_std_var", F32), ("input_skip_bias_sum", F32)]


def gen_norms():
    r = rng("skiplayernorm")
    h = 8
    x, s = normal(r, (2, 3, h)), normal(r, (2, 3, h))
    g, be, bi = normal(r, (h,)), normal(r, (h,)), normal(r, (h,))
    add("test_ms_skiplayernorm_all_outputs", "SkipLayerNormalization",
        [("x", x), ("skip", s), C("gamma", g), C("beta", be), C("bias", bi)], SKIP_OUTS, epsilon=1e-5)
    add("test_ms_skiplayernorm_default_epsilon", "SkipLayerNormalization",
        [("x", x), ("skip", s), C("gamma", g), C("beta", be)], [("output", F32)])
    add("test_ms_skiplayernorm_no_beta", "SkipLayerNormalization",
        [("x", x), ("skip", s), C("gamma", g), None, C("bias", bi)], [("output", F32), None, ("inv_std_var", F32)],
        epsilon=1e-6)
    add("test_ms_skiplayernorm_skip_broadcast_batch", "SkipLayerNormalization",
        [("x", x), ("skip", normal(r, (1, 3, h))), C("gamma", g), C("beta", be)], SKIP_OUTS)
    add("test_ms_skiplayernorm_skip_2d", "SkipLayerNormalization",
        [("x", x), ("skip", normal(r, (3, h))), C("gamma", g), C("beta", be)], [("output", F32)])
    add("test_ms_skiplayernorm_2d_odd_hidden", "SkipLayerNormalization",
        [("x", normal(r, (5, 7))), ("skip", normal(r, (5, 7))), ("gamma", normal(r, (7,))), ("beta", normal(r, (7,)))],
        SKIP_OUTS, epsilon=1e-3)
    r = rng("skipsimplified")
    add("test_ms_skipsimplifiedlayernorm_all_outputs", "SkipSimplifiedLayerNormalization",
        [("x", x), ("skip", s), C("gamma", g), C("bias", bi)], SKIP_OUTS, epsilon=1e-5)
    add("test_ms_skipsimplifiedlayernorm", "SkipSimplifiedLayerNormalization",
        [("x", normal(r, (4, 9))), ("skip", normal(r, (4, 9))), C("gamma", normal(r, (9,)))], [("output", F32)])
    add("test_ms_skipsimplifiedlayernorm_skip_broadcast", "SkipSimplifiedLayerNormalization",
        [("x", x), ("skip", normal(r, (1, 3, h))), C("gamma", g)], [("output", F32), None, ("inv_std_var", F32),
                                                                     ("input_skip_bias_sum", F32)])
    r = rng("layernorm1")
    x = normal(r, (2, 3, 6), 2)
    add("test_ms_layernorm_opset12_stats", "LayerNormalization",
        [("x", x), C("scale", normal(r, (6,))), C("b", normal(r, (6,)))], [("y", F32), ("mean", F32),
                                                                           ("inv_std", F32)],
        domain="", opset=12, epsilon=1e-5)
    add("test_ms_layernorm_opset13_y_only", "LayerNormalization",
        [("x", x), C("scale", normal(r, (6,))), C("b", normal(r, (6,)))], [("y", F32)], domain="", opset=13)
    add("test_ms_layernorm_opset16_axis1_no_bias", "LayerNormalization",
        [("x", x), C("scale", normal(r, (3, 6)))], [("y", F32), ("mean", F32), ("inv_std", F32)], domain="",
        opset=16, axis=1)
    r = rng("simplifiedlayernorm")
    add("test_ms_simplifiedlayernorm", "SimplifiedLayerNormalization",
        [("x", normal(r, (2, 4, 5))), C("scale", normal(r, (5,)))], [("y", F32), ("inv_std_var", F32)], domain="",
        opset=13, epsilon=1e-6)
    add("test_ms_simplifiedlayernorm_axis", "SimplifiedLayerNormalization",
        [("x", normal(r, (3, 2, 4))), ("scale", normal(r, (2, 4)))], [("y", F32)], domain="", opset=17, axis=-2)


def gen_embed_layer_norm():
    r = rng("embedlayernorm")
    b, s, h = 2, 5, 8
    ids = r.integers(0, 11, (b, s)).astype(I32)
    seg = r.integers(0, 2, (b, s)).astype(I32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], I32)
    word, pos, segment = normal(r, (11, h)), normal(r, (6, h)), normal(r, (2, h))
    g, be = normal(r, (h,)), normal(r, (h,))
    add("test_ms_embedlayernorm_segment_mask_sum", "EmbedLayerNormalization",
        [("ids", ids), ("seg", seg), C("word", word), C("pos", pos), C("segment", segment), C("g", g), C("b", be),
         ("mask", mask)], [("y", F32), ("mask_index", I32), ("embedding_sum", F32)])
    add("test_ms_embedlayernorm_epsilon_mask_holes", "EmbedLayerNormalization",
        [("ids", ids), ("seg", seg), C("word", word), C("pos", pos), C("segment", segment), C("g", g), C("b", be),
         ("mask", np.array([[1, 0, 1, 0, 1], [0, 0, 0, 0, 0]], I32))], [("y", F32), ("mask_index", I32)],
        epsilon=1e-5)
    add("test_ms_embedlayernorm_position_ids", "EmbedLayerNormalization",
        [("ids", ids), None, C("word", word), C("pos", pos), None, C("g", g), C("b", be), None,
         ("pos_ids", r.integers(0, 6, (b, s)).astype(I32))], [("y", F32), ("mask_index", I32),
                                                               ("embedding_sum", F32)])
    add("test_ms_embedlayernorm_position_ids_shared", "EmbedLayerNormalization",
        [("ids", ids), ("seg", seg), C("word", word), C("pos", pos), C("segment", segment), C("g", g), C("b", be),
         None, ("pos_ids", np.array([[4, 3, 2, 1, 0]], I32))], [("y", F32), ("mask_index", I32)])


# --- attention ---------------------------------------------------------------

def attention_inputs(r, b, s, din, columns):
    return normal(r, (b, s, din)), normal(r, (din, columns), 0.4), normal(r, (columns,), 0.2)


def gen_attention():
    b, s, n, h = 2, 4, 2, 4
    d = n * h
    r = rng("attention")
    x, w, bias = attention_inputs(r, b, s, d, 3 * d)
    base = [("x", x), C("w", w), C("bias", bias)]
    add("test_ms_attention_no_mask", "Attention", base, F32, num_heads=n)
    add("test_ms_attention_mask_lengths", "Attention", base + [("mask", np.array([3, 4], I32))], F32, num_heads=n)
    add("test_ms_attention_mask_end_start", "Attention", base + [("mask", np.array([4, 3, 1, 0], I32))], F32,
        num_heads=n)
    add("test_ms_attention_mask_2d", "Attention",
        base + [("mask", np.array([[1, 1, 0, 1], [1, 0, 0, 0]], I32))], F32, num_heads=n)
    mask3d = r.integers(0, 2, (b, s, s)).astype(I32)
    mask3d[:, :, 0] = 1
    add("test_ms_attention_mask_3d", "Attention", base + [("mask", mask3d)], F32, num_heads=n)
    # Megatron's 4-D mask (B, 1, M, M), M > S: ONNX Runtime runs it on CUDA only,
    # so the reference is the same mask sliced to 3-D.
    m4 = r.integers(0, 2, (b, 1, 6, 6)).astype(I32)
    m4[:, :, :, 0] = 1
    add("test_ms_attention_mask_4d", "Attention", base + [C("mask", m4)], F32, num_heads=n,
        reference=[helper.make_node("Attention", ["x", "w", "bias", "mask3"], ["y"], domain=MS, num_heads=n)]
        + constant_node("mask3", m4[:, 0, :s, :s]))
    add("test_ms_attention_unidirectional", "Attention", base, F32, num_heads=n, unidirectional=1)
    add("test_ms_attention_unidirectional_mask_2d", "Attention",
        base + [("mask", np.array([[1, 1, 1, 1], [0, 1, 1, 1]], I32))], F32, num_heads=n, unidirectional=1)
    add("test_ms_attention_scale_filter", "Attention", base + [("mask", np.array([2, 4], I32))], F32, num_heads=n,
        scale=0.3, mask_filter_value=-5.0)
    add("test_ms_attention_weights_fed", "Attention", [("x", x), ("w", w), ("bias", bias)], F32, num_heads=n)
    add("test_ms_attention_bias_per_head", "Attention",
        base + [None, None, ("attn_bias", normal(r, (1, n, s, s)))], F32, num_heads=n)
    add("test_ms_attention_bias_per_batch_masked", "Attention",
        base + [("mask", np.array([2, 3], I32)), None, ("attn_bias", normal(r, (b, 1, s, s)))], F32, num_heads=n)
    # Q/K and V of different hidden sizes.
    x2, w2, bias2 = attention_inputs(r, b, s, 6, 2 * d + 3 * n)
    add("test_ms_attention_qkv_hidden_sizes", "Attention", [("x", x2), C("w", w2), C("bias", bias2)], F32,
        num_heads=n, qkv_hidden_sizes=[d, d, 3 * n])
    # Odd sizes: 3 heads of 3, sequence 5, input hidden 7.
    x3, w3, bias3 = attention_inputs(r, 1, 5, 7, 27)
    add("test_ms_attention_odd_sizes", "Attention",
        [("x", x3), C("w", w3), C("bias", bias3), ("mask", np.array([[1, 1, 1, 1, 0]], I32))], F32, num_heads=3)
    # GPT-2 style decoding with past and present.
    past = normal(r, (2, b, n, 3, h))
    add("test_ms_attention_past_present", "Attention", base + [None, ("past", past)],
        [("y", F32), ("present", F32)], num_heads=n, unidirectional=1)
    x1 = normal(r, (b, 1, d))
    add("test_ms_attention_past_one_token", "Attention",
        [("x", x1), C("w", w), C("bias", bias), ("mask", np.ones((b, 4), I32)), ("past", past)],
        [("y", F32), ("present", F32)], num_heads=n, unidirectional=1)
    add("test_ms_attention_present_no_past", "Attention", base, [("y", F32), ("present", F32)], num_heads=n,
        unidirectional=1)


def constant_node(name, value):
    return [helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))]


def gen_multi_head_attention():
    b, s, l, n, h = 2, 3, 5, 2, 4
    d = n * h
    r = rng("multiheadattention")
    q, k, v = normal(r, (b, s, d)), normal(r, (b, l, d)), normal(r, (b, l, d))
    bias = normal(r, (3 * d,), 0.3)
    add("test_ms_mha_cross", "MultiHeadAttention", [("q", q), ("k", k), ("v", v)], F32, num_heads=n)
    add("test_ms_mha_bias", "MultiHeadAttention", [("q", q), ("k", k), ("v", v), C("bias", bias)], F32, num_heads=n)
    add("test_ms_mha_mask_lengths", "MultiHeadAttention",
        [("q", q), ("k", k), ("v", v), None, ("mask", np.array([3, 5], I32))], F32, num_heads=n)
    add("test_ms_mha_mask_2d", "MultiHeadAttention",
        [("q", q), ("k", k), ("v", v), C("bias", bias), ("mask", np.array([[1, 1, 0, 1, 1], [1, 1, 1, 0, 0]], I32))],
        F32, num_heads=n)
    mask3d = r.integers(0, 2, (b, s, l)).astype(I32)
    mask3d[:, :, 1] = 1
    add("test_ms_mha_mask_3d", "MultiHeadAttention", [("q", q), ("k", k), ("v", v), None, ("mask", mask3d)], F32,
        num_heads=n)
    add("test_ms_mha_attention_bias", "MultiHeadAttention",
        [("q", q), ("k", k), ("v", v), None, None, ("ab", normal(r, (1, n, s, l)))], F32, num_heads=n, scale=0.25)
    # Self attention with past and present (decoder), causal.
    ks, vs = normal(r, (b, s, d)), normal(r, (b, s, d))
    pk, pv = normal(r, (b, n, 2, h)), normal(r, (b, n, 2, h))
    add("test_ms_mha_past_present_causal", "MultiHeadAttention",
        [("q", q), ("k", ks), ("v", vs), None, None, None, ("pk", pk), ("pv", pv)],
        [("y", F32), ("present_key", F32), ("present_value", F32)], num_heads=n, unidirectional=1)
    add("test_ms_mha_present_only", "MultiHeadAttention", [("q", q), ("k", k), ("v", v), C("bias", bias)],
        [("y", F32), ("present_key", F32), ("present_value", F32)], num_heads=n)
    # Key and value already per head (B, N, L, H): cross attention reusing a cache.
    add("test_ms_mha_per_head_kv", "MultiHeadAttention",
        [("q", q), ("k", normal(r, (b, n, l, h))), ("v", normal(r, (b, n, l, h)))], F32, num_heads=n)
    add("test_ms_mha_qk_output_masked", "MultiHeadAttention",
        [("q", q), ("k", k), ("v", v), C("bias", bias), ("mask", np.array([4, 2], I32))],
        [("y", F32), None, None, ("qk", F32)], num_heads=n)
    add("test_ms_mha_mask_3b_plus_2", "MultiHeadAttention",
        [("q", q), ("k", k), ("v", v), None, ("mask", np.array([2, 5, 0, 0, 0, 0, 0, 0], I32))], F32, num_heads=n)
    add("test_ms_mha_past_mask_total_length", "MultiHeadAttention",
        [("q", q), ("k", ks), ("v", vs), None, ("mask", np.array([[1, 1, 1, 1, 0], [0, 1, 1, 1, 1]], I32)), None,
         ("pk", pk), ("pv", pv)], [("y", F32), ("present_key", F32), ("present_value", F32)], num_heads=n)
    add("test_ms_mha_odd_sizes_causal", "MultiHeadAttention",
        [("q", normal(r, (1, 5, 9))), ("k", normal(r, (1, 5, 9))), ("v", normal(r, (1, 5, 6)))], F32, num_heads=3,
        unidirectional=1)


def gen_transformer_layers():
    """Whole layers as ONNX Runtime's transformer optimizer leaves them."""
    r = rng("bert_layer")
    b, s, d, n, ff, vocab = 2, 6, 16, 4, 32, 20
    ids = r.integers(0, vocab, (b, s)).astype(I32)
    seg = r.integers(0, 2, (b, s)).astype(I32)
    mask = np.array([[1] * 6, [1, 1, 1, 1, 0, 0]], I32)
    names = {}

    def init(key, *shape, scale=0.3):
        names[key] = C(key, normal(r, shape, scale))
        return key
    nodes = [
        ms("EmbedLayerNormalization", ["ids", "seg", init("word", vocab, d), init("pos", s, d), init("segment", 2, d),
                                       init("g0", d), init("b0", d), "mask"], ["emb", "mask_index"]),
        ms("Attention", ["emb", init("qkv_w", d, 3 * d), init("qkv_b", 3 * d), "mask_index"], ["ctx"], num_heads=n),
        helper.make_node("MatMul", ["ctx", init("out_w", d, d)], ["proj"]),
        ms("SkipLayerNormalization", ["proj", "emb", init("g1", d), init("b1", d), init("proj_b", d)], ["h1"]),
        helper.make_node("MatMul", ["h1", init("ff1_w", d, ff)], ["ff1"]),
        ms("BiasGelu", ["ff1", init("ff1_b", ff)], ["act"]),
        ms("FusedMatMul", ["act", init("ff2_w", d, ff)], ["ff2"], transB=1),
        ms("SkipLayerNormalization", ["ff2", "h1", init("g2", d), init("b2", d), init("ff2_b", d)], ["y"]),
    ]
    add_graph("test_ms_layer_bert_encoder", nodes, [("ids", ids), ("seg", seg), ("mask", mask)] + list(names.values()),
              [("y", F32)])

    r = rng("gpt2_layer")
    b, s, past, d, n, ff = 2, 3, 4, 16, 2, 24
    h = d // n
    names.clear()
    nodes = [
        helper.make_node("LayerNormalization", ["x", init("ln_g", d), init("ln_b", d)], ["ln"], epsilon=1e-5),
        ms("Attention", ["ln", init("qkv_w", d, 3 * d), init("qkv_b", 3 * d), "mask", "past"], ["ctx", "present"],
           num_heads=n, unidirectional=1),
        ms("FusedMatMul", ["ctx", init("out_w", d, d)], ["proj"], alpha=1.0),
        ms("SkipLayerNormalization", ["proj", "x", init("g1", d), init("b1", d), init("proj_b", d)],
           ["ln2", "", "", "h1"], epsilon=1e-5),
        helper.make_node("MatMul", ["ln2", init("ff1_w", d, ff)], ["ff1"]),
        ms("FastGelu", ["ff1", init("ff1_b", ff)], ["act"]),
        helper.make_node("MatMul", ["act", init("ff2_w", ff, d)], ["ff2"]),
        helper.make_node("Add", ["ff2", "h1"], ["y"]),
    ]
    add_graph("test_ms_layer_gpt2_decoder_with_past", nodes,
              [("x", normal(r, (b, s, d))), ("mask", np.array([[0, 1, 1, 1, 1, 1, 1], [1] * 7], I32)),
               ("past", normal(r, (2, b, n, past, h)))] + list(names.values()),
              [("y", F32), ("present", F32)])

    r = rng("quantized_ffn")
    names.clear()
    nodes = [
        ms("DynamicQuantizeMatMul", ["x", "w1", "s1", "z1", init("bias1", 32)], ["h"]),
        ms("QuickGelu", ["h"], ["a"]),
        ms("DynamicQuantizeMatMul", ["a", "w2", "s2", "", init("bias2", 16)], ["y"]),
    ]
    ins = [("x", normal(r, (2, 5, 16))), C("w1", u8(r, (16, 32))), C("s1", np.array(0.01, F32)),
           C("z1", np.array(128, U8)), C("w2", i8(r, (32, 16))), C("s2", np.linspace(0.005, 0.02, 16).astype(F32))]
    add_graph("test_ms_layer_dynamic_quantized_ffn", nodes, ins + list(names.values()), [("y", F32)])


# --- quantized ---------------------------------------------------------------

def u8(r, shape):
    return r.integers(0, 256, shape).astype(U8)


def i8(r, shape):
    return r.integers(-128, 128, shape).astype(I8)


def gen_quant_matmul():
    r = rng("matmulintegertofloat")
    a, b = u8(r, (2, 3, 6)), i8(r, (6, 5))
    add("test_ms_matmulintegertofloat", "MatMulIntegerToFloat",
        [("a", a), C("b", b), C("a_scale", np.array(0.02, F32)), C("b_scale", np.array(0.03, F32))], F32)
    add("test_ms_matmulintegertofloat_zero_points_bias", "MatMulIntegerToFloat",
        [("a", a), C("b", b), C("a_scale", np.array(0.02, F32)), C("b_scale", np.array(0.03, F32)),
         C("a_zp", np.array(130, U8)), C("b_zp", np.array(-3, I8)), C("bias", normal(r, (5,)))], F32)
    add("test_ms_matmulintegertofloat_per_column", "MatMulIntegerToFloat",
        [("a", a), C("b", b), C("a_scale", np.array([0.02], F32)), C("b_scale", np.linspace(0.01, 0.05, 5).astype(F32)),
         C("a_zp", np.array(128, U8)), C("b_zp", np.arange(-2, 3).astype(I8))], F32)
    add("test_ms_matmulintegertofloat_int8_a_fed_b", "MatMulIntegerToFloat",
        [("a", i8(r, (4, 7))), ("b", i8(r, (7, 3))), ("a_scale", np.array(0.05, F32)), ("b_scale", np.array(0.01, F32)),
         ("a_zp", np.array(5, I8)), ("b_zp", np.array(-20, I8))], F32)
    add("test_ms_matmulintegertofloat_batched_b", "MatMulIntegerToFloat",
        [("a", u8(r, (2, 3, 4))), ("b", i8(r, (2, 4, 6))), C("a_scale", np.array(0.1, F32)),
         C("b_scale", np.array(0.2, F32))], F32)
    r = rng("dynamicquantizematmul")
    x = normal(r, (2, 4, 16), 3)
    add("test_ms_dynamicquantizematmul", "DynamicQuantizeMatMul",
        [("x", x), C("b", i8(r, (16, 8))), C("b_scale", np.array(0.02, F32))], F32)
    add("test_ms_dynamicquantizematmul_uint8_zp_bias", "DynamicQuantizeMatMul",
        [("x", x), C("b", u8(r, (16, 8))), C("b_scale", np.array(0.02, F32)), C("b_zp", np.array(128, U8)),
         C("bias", normal(r, (8,)))], F32)
    add("test_ms_dynamicquantizematmul_per_column", "DynamicQuantizeMatMul",
        [("x", normal(r, (5, 16), 2)), C("b", i8(r, (16, 6))), C("b_scale", np.linspace(0.01, 0.03, 6).astype(F32)),
         C("b_zp", np.array([0, 1, -1, 2, -2, 3], I8))], F32)
    add("test_ms_dynamicquantizematmul_positive_input", "DynamicQuantizeMatMul",
        [("x", np.abs(normal(r, (3, 16)))), ("b", i8(r, (16, 4))), ("b_scale", np.array(0.05, F32))], F32)
    add("test_ms_dynamicquantizematmul_zero_input", "DynamicQuantizeMatMul",
        [("x", np.zeros((2, 16), F32)), C("b", i8(r, (16, 4))), C("b_scale", np.array(0.05, F32)), None,
         C("bias", normal(r, (4,)))], F32)


def qparams(prefix, scale, zp):
    return [C(f"{prefix}_scale", np.array(scale, F32)), C(f"{prefix}_zp", np.array(zp))]


def gen_qlinear_binary():
    for op in ["QLinearAdd", "QLinearMul"]:
        r = rng(op)
        low = op.lower()[7:]
        def binary(name, a, b, pa, pb, pc):
            add(f"test_ms_qlinear{low}_{name}", op,
                [("a", a)] + qparams("a", *pa) + [("b", b)] + qparams("b", *pb) + qparams("c", *pc), a.dtype)
        binary("same_shape_u8", u8(r, (3, 37)), u8(r, (3, 37)), (0.05, U8(128)), (0.02, U8(100)), (0.07, U8(120)))
        binary("row_broadcast_u8", u8(r, (2, 3, 8)), u8(r, (8,)), (0.03, U8(10)), (0.04, U8(200)), (0.05, U8(128)))
        binary("column_broadcast_u8", u8(r, (4, 6)), u8(r, (4, 1)), (0.03, U8(128)), (0.04, U8(128)), (0.06, U8(128)))
        binary("scalar_a_u8", u8(r, ()), u8(r, (5, 7)), (0.1, U8(128)), (0.01, U8(128)), (0.05, U8(64)))
        binary("outer_i8", i8(r, (3, 1)), i8(r, (1, 9)), (0.02, I8(0)), (0.03, I8(-5)), (0.04, I8(3)))
        binary("same_shape_i8_saturating", i8(r, (40,)), i8(r, (40,)), (0.2, I8(0)), (0.3, I8(0)), (0.01, I8(0)))


def gen_qlinear_lookup():
    for op, attrs in [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.15})]:
        r = rng(op)
        low = op.lower()[7:]
        add(f"test_ms_qlinear{low}_u8", op,
            [("x", u8(r, (4, 64)))] + qparams("x", 0.05, U8(128)) + qparams("y", 1.0 / 256 if op.endswith("Sigmoid")
                                                                           else 0.04, U8(0 if op.endswith("Sigmoid")
                                                                                         else 100)), U8, **attrs)
        add(f"test_ms_qlinear{low}_i8", op,
            [("x", i8(r, (2, 3, 43)))] + qparams("x", 0.1, I8(-3)) + qparams("y", 0.005, I8(-128)), I8, **attrs)
    r = rng("qlinearleakyrelu_nozp")
    # (ONNX Runtime reads input 4 unconditionally, so only X's zero point is left out.)
    add("test_ms_qlinearleakyrelu_default_alpha_no_x_zero_point", "QLinearLeakyRelu",
        [("x", i8(r, (100,))), C("x_scale", np.array(0.1, F32)), None, C("y_scale", np.array(0.05, F32)),
         C("y_zp", np.array(-4, I8))], I8)


def gen_qlinear_concat():
    r = rng("qlinearconcat")
    a, b, c = u8(r, (2, 3, 4)), u8(r, (2, 5, 4)), u8(r, (2, 1, 4))
    add("test_ms_qlinearconcat_axis1_u8", "QLinearConcat",
        qparams("y", 0.05, U8(128)) + [("a", a)] + qparams("a", 0.05, U8(128)) + [("b", b)] +
        qparams("b", 0.02, U8(100)) + [("c", c)] + qparams("c", 0.1, U8(10)), U8, axis=1)
    add("test_ms_qlinearconcat_last_axis_i8", "QLinearConcat",
        qparams("y", 0.03, I8(0)) + [("a", i8(r, (3, 2)))] + qparams("a", 0.01, I8(-10)) + [("b", i8(r, (3, 5)))] +
        qparams("b", 0.08, I8(7)), I8, axis=-1)


def gen_qlinear_pools():
    r = rng("qlinearglobalaveragepool")
    add("test_ms_qlinearglobalaveragepool_nchw_u8", "QLinearGlobalAveragePool",
        [("x", u8(r, (2, 3, 5, 7)))] + qparams("x", 0.05, U8(128)) + qparams("y", 0.02, U8(100)), U8)
    add("test_ms_qlinearglobalaveragepool_nhwc_i8", "QLinearGlobalAveragePool",
        [("x", i8(r, (2, 4, 4, 5)))] + qparams("x", 0.1, I8(-2)) + qparams("y", 0.03, I8(5)), I8, channels_last=1)
    add("test_ms_qlinearglobalaveragepool_1d_large", "QLinearGlobalAveragePool",
        [("x", u8(r, (1, 2, 1000)))] + qparams("x", 0.01, U8(0)) + qparams("y", 0.004, U8(0)), U8)
    r = rng("qlinearaveragepool")
    x = u8(r, (1, 3, 7, 6))
    p = qparams("x", 0.05, U8(128)) + qparams("y", 0.03, U8(120))
    add("test_ms_qlinearaveragepool_2d", "QLinearAveragePool", [("x", x)] + p, U8, kernel_shape=[3, 3],
        strides=[2, 2], pads=[1, 1, 1, 1])
    add("test_ms_qlinearaveragepool_2d_count_include_pad", "QLinearAveragePool", [("x", x)] + p, U8,
        kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    add("test_ms_qlinearaveragepool_2d_ceil", "QLinearAveragePool", [("x", x)] + p, U8, kernel_shape=[2, 2],
        strides=[2, 2], ceil_mode=1)
    add("test_ms_qlinearaveragepool_2d_same_upper", "QLinearAveragePool", [("x", x)] + p, U8, kernel_shape=[3, 2],
        strides=[2, 2], auto_pad="SAME_UPPER")
    add("test_ms_qlinearaveragepool_global_window", "QLinearAveragePool", [("x", x)] + p, U8, kernel_shape=[7, 6])
    add("test_ms_qlinearaveragepool_1d_i8", "QLinearAveragePool",
        [("x", i8(r, (2, 2, 9)))] + qparams("x", 0.1, I8(3)) + qparams("y", 0.07, I8(-1)), I8, kernel_shape=[4],
        strides=[3], pads=[2, 1])
    add("test_ms_qlinearaveragepool_3d", "QLinearAveragePool",
        [("x", u8(r, (1, 2, 4, 5, 3)))] + p, U8, kernel_shape=[2, 3, 2], strides=[1, 2, 1], pads=[0, 1, 0, 1, 0, 1])
    add("test_ms_qlinearaveragepool_nhwc_i8", "QLinearAveragePool",
        [("x", i8(r, (1, 6, 5, 4)))] + qparams("x", 0.1, I8(-3)) + qparams("y", 0.05, I8(2)), I8,
        kernel_shape=[2, 3], strides=[2, 1], pads=[0, 1, 1, 1], channels_last=1)


def set_output_shapes(cases_dir):
    for name in sorted(os.listdir(cases_dir)):
        case_dir = os.path.join(cases_dir, name)
        for file in ["model.onnx", "reference.onnx"]:
            path = os.path.join(case_dir, file)
            if not os.path.exists(path):
                continue
            model = onnx.load(path)
            for i, output in enumerate(model.graph.output):
                recorded = onnx.TensorProto()
                with open(os.path.join(case_dir, "test_data_set_0", f"output_{i}.pb"), "rb") as f:
                    recorded.ParseFromString(f.read())
                shape = output.type.tensor_type.shape
                shape.Clear()
                for d in recorded.dims:
                    shape.dim.add().dim_value = d
            onnx.save(model, path)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--set-output-shapes":
        set_output_shapes(sys.argv[2])
        return 0
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    gen_activations()
    gen_fused_matmul()
    gen_fused_conv()
    gen_fused_gemm()
    gen_norms()
    gen_embed_layer_norm()
    gen_attention()
    gen_multi_head_attention()
    gen_transformer_layers()
    gen_quant_matmul()
    gen_qlinear_binary()
    gen_qlinear_lookup()
    gen_qlinear_concat()
    gen_qlinear_pools()
    write(sys.argv[1])
    print(f"wrote {len(CASES)} cases to {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
