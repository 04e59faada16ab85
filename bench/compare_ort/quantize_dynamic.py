#!/usr/bin/python3
"""Dynamic int8 quantization of a float model, written with onnx.helper the
way ONNX Runtime's quantize_dynamic writes it (QInt8 weights, per tensor,
symmetric; activations quantized at run time). For Conv:

    x_q, x_scale, x_zp = DynamicQuantizeLinear(x)          (uint8)
    y_i32 = ConvInteger(x_q, W_q, x_zp, W_zp)               (W_q int8, W_zp 0)
    y = Cast(y_i32, float) * (x_scale * W_scale) [+ B as [1, M, 1, 1]]

for MatMul with a constant 2-D B, either the same chain with MatMulInteger

    y = Cast(MatMulInteger(x_q, B_q, x_zp, B_zp), float) * (x_scale * B_scale)

or (matmul_form="dqmm") the one com.microsoft node ONNX Runtime's
optimizer folds that chain into: y = DynamicQuantizeMatMul(x, B_q, B_scale,
B_zp).

Every Conv (and, with --matmul, every MatMul) with a constant float weight is
replaced; the rest of the graph is kept. A value quantized once is reused by
every node that reads it.

usage: quantize_dynamic.py IN.onnx OUT.onnx [--weight-type int8|uint8] [--per-channel] [--matmul integer|dqmm]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weight(w, weight_type="int8", per_channel=False):
    """int8: symmetric, scale = max|w| / 127, zero point 0. uint8: asymmetric
    over [min(w, 0), max(w, 0)], scale = range / 255, zero point
    round(-min / scale). Per tensor, or per output channel (axis 0)."""
    axes = tuple(range(1, w.ndim)) if per_channel else None
    if weight_type == "int8":
        scale = np.abs(w).max(axis=axes, keepdims=per_channel).astype(np.float64) / 127.0
        scale = np.where(scale == 0, 1.0, scale)
        q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        zp = np.zeros(scale.shape, np.int8)
    else:
        lo = np.minimum(w.min(axis=axes, keepdims=per_channel), 0).astype(np.float64)
        hi = np.maximum(w.max(axis=axes, keepdims=per_channel), 0).astype(np.float64)
        scale = (hi - lo) / 255.0
        scale = np.where(scale == 0, 1.0, scale)
        zp = np.clip(np.rint(-lo / scale), 0, 255).astype(np.uint8)
        q = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale.astype(np.float32).reshape(-1), zp.reshape(-1)


def quantize_matmul(node, inits, quantized, nodes, new_inits, weight_type, form):
    """Appends the quantized form of `node` (a MatMul with a constant 2-D B)."""
    x, w_name = node.input[0], node.input[1]
    base = node.name or node.output[0]
    w_q, w_scale, w_zp = quantize_weight(numpy_helper.to_array(inits[w_name]), weight_type)
    w_scale, w_zp = w_scale.reshape(()), w_zp.reshape(())
    new_inits += [numpy_helper.from_array(w_q, f"{w_name}_quantized"),
                  numpy_helper.from_array(w_scale, f"{w_name}_scale"),
                  numpy_helper.from_array(w_zp, f"{w_name}_zero_point")]
    if form == "dqmm":
        nodes.append(helper.make_node("DynamicQuantizeMatMul", [x, f"{w_name}_quantized", f"{w_name}_scale",
                                                                f"{w_name}_zero_point"], [node.output[0]],
                                      name=f"{base}_dqmm", domain="com.microsoft"))
        return
    if x not in quantized:
        q = (f"{x}_quantized", f"{x}_scale", f"{x}_zero_point")
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(q), name=f"{x}_QuantizeLinear"))
        quantized[x] = q
    x_q, x_scale, x_zp = quantized[x]
    nodes.append(helper.make_node("MatMulInteger", [x_q, f"{w_name}_quantized", x_zp, f"{w_name}_zero_point"],
                                  [f"{base}_output_quantized"], name=f"{base}_quant"))
    nodes.append(helper.make_node("Cast", [f"{base}_output_quantized"], [f"{base}_output_quantized_cast"],
                                  to=TensorProto.FLOAT, name=f"{base}_cast"))
    nodes.append(helper.make_node("Mul", [x_scale, f"{w_name}_scale"], [f"{base}_scales_mul"],
                                  name=f"{base}_scales_mul"))
    nodes.append(helper.make_node("Mul", [f"{base}_output_quantized_cast", f"{base}_scales_mul"], [node.output[0]],
                                  name=f"{base}_output_scale_mul"))


def quantize_model(model, weight_type="int8", per_channel=False, matmul=None):
    """matmul: None (Conv only), "integer" or "dqmm" (MatMul too, in that form)."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    nodes, quantized = [], {}
    new_inits = []
    for node in graph.node:
        if (matmul and node.op_type == "MatMul" and node.input[1] in inits
                and len(inits[node.input[1]].dims) == 2):
            quantize_matmul(node, inits, quantized, nodes, new_inits, weight_type, matmul)
            continue
        w_name = node.input[1] if node.op_type == "Conv" and len(node.input) > 1 else None
        bias_name = node.input[2] if w_name is not None and len(node.input) > 2 else ""
        if w_name is None or w_name not in inits or (bias_name and bias_name not in inits):
            nodes.append(node)
            continue
        x = node.input[0]
        base = node.name or node.output[0]
        if x not in quantized:
            q = (f"{x}_quantized", f"{x}_scale", f"{x}_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(q), name=f"{x}_QuantizeLinear"))
            quantized[x] = q
        x_q, x_scale, x_zp = quantized[x]
        w = numpy_helper.to_array(inits[w_name])
        w_q, w_scale, w_zp = quantize_weight(w, weight_type, per_channel)
        if per_channel:
            # The product's scale per output channel, broadcast over [N, M, H, W].
            w_scale = w_scale.reshape(1, -1, 1, 1)
        else:
            w_scale, w_zp = w_scale.reshape(()), w_zp.reshape(())
        new_inits += [numpy_helper.from_array(w_q, f"{w_name}_quantized"),
                      numpy_helper.from_array(w_scale, f"{w_name}_scale"),
                      numpy_helper.from_array(w_zp, f"{w_name}_zero_point")]
        attrs = [a for a in node.attribute]
        nodes.append(helper.make_node("ConvInteger", [x_q, f"{w_name}_quantized", x_zp, f"{w_name}_zero_point"],
                                      [f"{base}_output_quantized"], name=f"{base}_quant"))
        nodes[-1].attribute.extend(attrs)
        nodes.append(helper.make_node("Cast", [f"{base}_output_quantized"], [f"{base}_output_quantized_cast"],
                                      to=TensorProto.FLOAT, name=f"{base}_cast"))
        nodes.append(helper.make_node("Mul", [x_scale, f"{w_name}_scale"], [f"{base}_scales_mul"],
                                      name=f"{base}_scales_mul"))
        has_bias = len(node.input) > 2 and node.input[2]
        scaled = node.output[0] if not has_bias else f"{base}_output_scaled"
        nodes.append(helper.make_node("Mul", [f"{base}_output_quantized_cast", f"{base}_scales_mul"], [scaled],
                                      name=f"{base}_output_scale_mul"))
        if has_bias:
            b = numpy_helper.to_array(inits[node.input[2]]).reshape(1, -1, 1, 1)
            new_inits.append(numpy_helper.from_array(b.astype(np.float32), f"{node.input[2]}_reshaped"))
            nodes.append(helper.make_node("Add", [scaled, f"{node.input[2]}_reshaped"], [node.output[0]],
                                          name=f"{base}_bias_add"))
    used = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + [t for t in new_inits if t.name in used])
    del graph.value_info[:]
    if matmul == "dqmm" and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


def main():
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--weight-type", choices=["int8", "uint8"], default="int8")
    p.add_argument("--per-channel", action="store_true")
    p.add_argument("--matmul", choices=["integer", "dqmm"], help="also quantize MatMuls, in this form")
    args = p.parse_args()
    model = quantize_model(onnx.load(args.input), args.weight_type, args.per_channel, args.matmul)
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
