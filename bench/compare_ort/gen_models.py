#!/usr/bin/python3
"""Exports the model sets of the onyx / ONNX Runtime comparison with torch.

usage: gen_models.py OUT_DIR [--small] [--set cnn|sequence] [--models a,b] [--opset N] [--list]

Two sets: "cnn" (below) and "sequence" (sequence_models.py: BERT, a GPT-2-style
decoder, ViT, LSTM, GRU, an MLP; several inputs, int64 token ids, a dynamic
"sequence" dimension recorded in meta.json's "fixed_dims"). The sequence set
also holds bert_base_fused and gpt2_6layer_fused (fused_models.py): their
base model's weights, inputs and reference written in the com.microsoft
operators ONNX Runtime's transformer optimizer produces (meta.json
"fused_from" names the base).

Each model gets OUT_DIR/<name>/model.onnx (opset 17, dynamic batch dimension
named "batch"), meta.json (input and output names, dtypes, dims with "batch"
for the free dimension) and test_data_set_0/ with input_0.pb / input_0.bin (a
fixed-seed batch of 2) and output_0.pb (torch's own output for it, the
independent reference). Weights are random with a fixed seed per model;
BatchNorm running statistics are measured on random images (after
BatchNorm / LayerNorm affine parameters were drawn at random) and then
perturbed a little, so that every layer changes the output (torchvision's
init leaves them 0/1) while activations stay well scaled.
The *_int8 variants are their float model rewritten by quantize_dynamic.py
(ONNX Runtime's dynamic quantization of Conv: DynamicQuantizeLinear ->
ConvInteger); their reference is torch running the float model with each
convolution's input and weights quantized and dequantized the same way
(round half to even), so it checks the integer arithmetic, not the float
model. meta.json's "atol" gives their tolerance, 2% of the output's range
(the float models use 1e-4): where an activation sits on a rounding
boundary, float summation order flips it by one quantization step and the
flip propagates (measured at 64x64: U-Net 99% of outputs within 1e-7, max
0.5% of the range; MobileNetV2 max 0.4%; ResNet-18 max 1.3%); an error in the
integer arithmetic (a zero point ignored, weights mis-shifted) moves outputs
by 5% of the range and more.
--small exports the same architectures at 64x64 (the CI agreement test);
the default is the benchmark size (224x224, the segmenter 512x512). A model
whose meta.json was written by this version of the generator is kept.
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tv

from fused_models import FUSED_MODELS
from sequence_models import SEQUENCE_MODELS

# Bump when a model's definition, weights or reference data change: models
# written by another version are exported again.
GENERATOR_VERSION = 3
OPSET = 17
REFERENCE_BATCH = 2


class UNetFPN(nn.Module):
    """U-Net encoder/decoder with ConvTranspose upsampling and skip concats,
    plus an FPN-style head that Resizes every decoder level to full size."""

    def __init__(self, classes=4, widths=(8, 16, 32, 64, 128), pyramid=16):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                                 nn.ReLU(inplace=True),
                                 nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                                 nn.ReLU(inplace=True))

        self.down = nn.ModuleList()
        cin = 3
        for w in widths:
            self.down.append(block(cin, w))
            cin = w
        self.up = nn.ModuleList()
        self.fuse = nn.ModuleList()
        self.lateral = nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(nn.ConvTranspose2d(cin, w, 2, stride=2))
            self.fuse.append(block(2 * w, w))
            self.lateral.append(nn.Conv2d(w, pyramid, 1))
            cin = w
        self.head = nn.Sequential(nn.Conv2d(pyramid, pyramid, 3, padding=1), nn.BatchNorm2d(pyramid),
                                  nn.ReLU(inplace=True), nn.Conv2d(pyramid, classes, 1))

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            if i:
                x = F.max_pool2d(x, 2)
            x = block(x)
            skips.append(x)
        skips.pop()
        pyramid = 0
        for up, fuse, lateral in zip(self.up, self.fuse, self.lateral):
            x = fuse(torch.cat([up(x), skips.pop()], dim=1))
            level = lateral(x)
            scale = 2 ** len(skips)
            if scale > 1:
                level = F.interpolate(level, scale_factor=scale, mode="bilinear", align_corners=False)
            pyramid = pyramid + level
        return self.head(pyramid)


# name -> (constructor, full input size, small input size)
MODELS = {
    "resnet18": (lambda: tv.resnet18(), 224, 64),
    "resnet50": (lambda: tv.resnet50(), 224, 64),
    "mobilenet_v2": (lambda: tv.mobilenet_v2(), 224, 64),
    "mobilenet_v3_large": (lambda: tv.mobilenet_v3_large(), 224, 64),
    "efficientnet_b0": (lambda: tv.efficientnet_b0(), 224, 64),
    "squeezenet1_1": (lambda: tv.squeezenet1_1(), 224, 64),
    "shufflenet_v2": (lambda: tv.shufflenet_v2_x1_0(), 224, 64),
    "densenet121": (lambda: tv.densenet121(), 224, 64),
    "convnext_tiny": (lambda: tv.convnext_tiny(), 224, 64),
    "regnet_y_400mf": (lambda: tv.regnet_y_400mf(), 224, 64),
    "unet_fpn": (lambda: UNetFPN(), 512, 64),
}

# int8 variant -> its float model.
INT8 = {"resnet18_int8": "resnet18", "mobilenet_v2_int8": "mobilenet_v2", "unet_fpn_int8": "unet_fpn"}
MODELS.update({name: MODELS[base] for name, base in INT8.items()})


class FakeQuantizedConvs:
    """While active, every Conv2d of `model` computes with the dequantized
    weights and bias of its ConvInteger in the quantized ONNX model (matched
    by shape and value: the exporter folded BatchNorm into them) and on its
    input quantized as DynamicQuantizeLinear does it (uint8 over
    [min(x, 0), max(x, 0)] of the whole tensor, round half to even) and
    dequantized."""

    def __init__(self, model, quantized_onnx):
        from onnx import numpy_helper
        inits = {t.name: numpy_helper.to_array(t) for t in quantized_onnx.graph.initializer}
        self.onnx_convs = []
        for node in quantized_onnx.graph.node:
            if node.op_type != "ConvInteger":
                continue
            w = node.input[1]
            weights = (inits[w].astype(np.float64) - inits[w[:-len("_quantized")] + "_zero_point"]) * \
                inits[w[:-len("_quantized")] + "_scale"]
            bias = None
            for other in quantized_onnx.graph.node:
                if other.op_type == "Add" and other.name == node.name[:-len("_quant")] + "_bias_add":
                    bias = inits[other.input[1]].reshape(-1)
            self.onnx_convs.append((weights.astype(np.float32), bias))
        self.convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
        self.saved, self.hooks = [], []

    def __enter__(self):
        for conv in self.convs:
            w = conv.weight.data.numpy()
            candidates = [(np.abs(q - w).max(), i) for i, (q, _) in enumerate(self.onnx_convs) if q.shape == w.shape]
            _, best = min(candidates)
            weights, bias = self.onnx_convs[best]
            self.saved.append((conv.weight.data, conv.bias))
            conv.weight.data = torch.from_numpy(weights)
            conv.bias = nn.Parameter(torch.from_numpy(bias.astype(np.float32))) if bias is not None else None
            self.hooks.append(conv.register_forward_pre_hook(lambda module, args: (self.quantize(args[0]),)))
        return self

    @staticmethod
    def quantize(x):
        lo = np.float32(min(float(x.min()), 0.0))
        hi = np.float32(max(float(x.max()), 0.0))
        scale = np.float32((hi - lo) / np.float32(255))
        if scale == 0:
            return x
        zp = float(np.clip(np.rint(-lo / scale), 0, 255))
        q = torch.clamp(torch.round(x / torch.tensor(scale)) + zp, 0, 255)
        return (q - zp) * torch.tensor(scale)

    def __exit__(self, *exc):
        for hook in self.hooks:
            hook.remove()
        for conv, (w, b) in zip(self.convs, self.saved):
            conv.weight.data = w
            conv.bias = b


def randomize_normalization(model, size, generator):
    """Random affine parameters for every BatchNorm / LayerNorm and random
    ConvNeXt layer scales; then BatchNorm running statistics measured on
    random images through the model as it now is (so activations stay well
    scaled however deep the network), then perturbed a little."""
    batch_norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)) and m.weight is not None:
                m.weight.copy_(torch.empty_like(m.weight).uniform_(0.6, 1.4, generator=generator))
                m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=generator))
        for name, p in model.named_parameters():
            if name.endswith("layer_scale"):
                p.copy_(torch.empty_like(p).uniform_(0.05, 0.2, generator=generator))
    # Only the BatchNorms in training mode: dropout and stochastic depth stay
    # as inference runs them.
    model.eval()
    for m in batch_norms:
        m.reset_running_stats()
        m.momentum = None  # running statistics = the calibration batch's
        m.train()
    # One batch, large enough that the last stages' few pixels per image
    # still give every channel a representative variance (with 4 images at
    # 64x64, EfficientNet-B0's activations grew 40x by its last stage).
    with torch.no_grad():
        model(torch.randn(32 if size <= 64 else 16, 3, size, size, generator=generator))
    model.eval()
    with torch.no_grad():
        for m in batch_norms:
            c = m.num_features
            m.running_mean.add_(0.05 * torch.randn(c, generator=generator) * m.running_var.sqrt())
            m.running_var.mul_(torch.empty(c).uniform_(0.9, 1.1, generator=generator))


def save_tensor(path, array, name):
    from onnx import numpy_helper
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())


def export(name, out_dir, small):
    build, full_size, small_size = MODELS[name]
    size = small_size if small else full_size
    meta_path = os.path.join(out_dir, name, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            if json.load(f).get("generator_version") == GENERATOR_VERSION:
                return False
    base = INT8.get(name, name)
    seed = 1000 + sorted(m for m in MODELS if m not in INT8).index(base)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = build()
    randomize_normalization(model, size, generator)
    example = torch.randn(REFERENCE_BATCH, 3, size, size, generator=generator)
    with torch.no_grad():
        expected = model(example)
    path = os.path.join(out_dir, name)
    data = os.path.join(path, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    torch.onnx.export(model, (example,), os.path.join(path, "model.onnx"), opset_version=OPSET,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    if name in INT8:
        import onnx
        from quantize_dynamic import quantize_model
        from torch.fx.experimental.optimization import fuse
        model_path = os.path.join(path, "model.onnx")
        quantized = quantize_model(onnx.load(model_path))
        onnx.save(quantized, model_path)
        # BatchNorm folded into the convolutions, as the exporter did.
        fused = fuse(model)
        with torch.no_grad(), FakeQuantizedConvs(fused, quantized):
            expected = fused(example)
    save_tensor(os.path.join(data, "input_0.pb"), example.numpy(), "input")
    example.numpy().astype(np.float32).tofile(os.path.join(data, "input_0.bin"))
    save_tensor(os.path.join(data, "output_0.pb"), expected.numpy(), "output")
    meta = {
        "generator_version": GENERATOR_VERSION,
        "name": name,
        "opset": OPSET,
        "seed": seed,
        "inputs": [{"name": "input", "dtype": "float32", "dims": ["batch", 3, size, size]}],
        "outputs": [{"name": "output", "dtype": "float32", "dims": ["batch"] + list(expected.shape[1:])}],
        "reference_batch": REFERENCE_BATCH,
        "output_abs_max": float(expected.abs().max()),
        "output_std": float(expected.std()),
    }
    if name in INT8:
        meta["quantized_from"] = base
        meta["atol"] = 0.02 * float(expected.max() - expected.min())
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return True


def randomize_sequence_model(model, generator):
    """Random LayerNorm affine parameters, embeddings with BERT's and GPT-2's
    initialiser and ViT's zero-initialised head drawn at random, so that
    every parameter changes the output; then eval mode."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(torch.empty_like(m.weight).uniform_(0.6, 1.4, generator=generator))
                m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=generator))
            elif isinstance(m, nn.Embedding):
                m.weight.normal_(0.0, 0.02, generator=generator)  # BERT's and GPT-2's initialiser
            elif isinstance(m, nn.Linear) and not m.weight.any():
                m.weight.normal_(0.0, 0.02, generator=generator)  # ViT's head starts at zero
                m.bias.normal_(0.0, 0.02, generator=generator)
    model.eval()


def sequence_model(name, small):
    """Sequence-set model `name` of SEQUENCE_MODELS built, randomized and
    given its example inputs, all from its own seed: (seed, module, inputs,
    output names). A fused variant calls it with its base's name and so gets
    the very same weights and inputs."""
    build, make_inputs, output_names, build_small = SEQUENCE_MODELS[name]
    seed = 2000 + sorted(SEQUENCE_MODELS).index(name)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = (build_small or build)() if small else build()
    randomize_sequence_model(model, generator)
    return seed, model, make_inputs(REFERENCE_BATCH, small, generator), output_names


def export_sequence(name, out_dir, small):
    """A model of the sequence set: every input and output stored, the
    "sequence" dimension dynamic in the graph and fixed in meta.json. A
    FUSED_MODELS variant is written with onnx.helper from its base's module
    (fused_models.py); torch's output for that module is its reference."""
    meta_path = os.path.join(out_dir, name, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            if json.load(f).get("generator_version") == GENERATOR_VERSION:
                return False
    base, build_fused = FUSED_MODELS.get(name, (name, None))
    base, matmul_form = QUANTIZED_SEQUENCE.get(name, (base, None))
    seed, model, inputs, output_names = sequence_model(base, small)
    with torch.no_grad():
        if matmul_form:
            with FakeQuantizedMatMuls(model.layers.modules()):
                expected = model(*[t for _, t, _ in inputs])
        else:
            expected = model(*[t for _, t, _ in inputs])
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    path = os.path.join(out_dir, name)
    data = os.path.join(path, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    dynamic = {}
    fixed = {}
    for input_name, tensor, dims in inputs:
        dynamic[input_name] = {i: d for i, d in enumerate(dims) if isinstance(d, str)}
        fixed.update({d: tensor.shape[i] for i, d in enumerate(dims) if isinstance(d, str) and d != "batch"})
    for output_name, out in zip(output_names, expected):
        # Outputs keep the batch dimension first and a token output the sequence second.
        axes = {0: "batch"}
        if "sequence" in fixed and out.dim() >= 2 and out.shape[1] == fixed["sequence"]:
            axes[1] = "sequence"
        dynamic[output_name] = axes
    if build_fused:
        import onnx
        onnx.save(build_fused(model), os.path.join(path, "model.onnx"))
    else:
        torch.onnx.export(model, tuple(t for _, t, _ in inputs), os.path.join(path, "model.onnx"),
                          opset_version=OPSET, input_names=[n for n, _, _ in inputs], output_names=output_names,
                          dynamic_axes=dynamic)
    if matmul_form:
        import onnx
        from quantize_dynamic import quantize_model
        model_path = os.path.join(path, "model.onnx")
        onnx.save(quantize_model(onnx.load(model_path), matmul=matmul_form), model_path)
    for i, (input_name, tensor, _) in enumerate(inputs):
        save_tensor(os.path.join(data, f"input_{i}.pb"), tensor.numpy(), input_name)
        tensor.numpy().tofile(os.path.join(data, f"input_{i}.bin"))
    for j, (output_name, out) in enumerate(zip(output_names, expected)):
        save_tensor(os.path.join(data, f"output_{j}.pb"), out.numpy(), output_name)
    meta = {
        "generator_version": GENERATOR_VERSION,
        "name": name,
        "set": "sequence",
        "opset": OPSET,
        "seed": seed,
        "inputs": [{"name": n, "dtype": str(t.numpy().dtype), "dims": ["batch"] + list(d[1:])} for n, t, d in inputs],
        "outputs": [{"name": n, "dtype": "float32", "dims": ["batch"] + list(o.shape[1:])}
                    for n, o in zip(output_names, expected)],
        "fixed_dims": fixed,
        "reference_batch": REFERENCE_BATCH,
        "output_abs_max": max(float(o.abs().max()) for o in expected),
    }
    if build_fused:
        meta["fused_from"] = base
    if matmul_form:
        # As for the int8 CNNs: 2% of the outputs' range covers an activation
        # on a rounding boundary flipping by one step; an error in the integer
        # arithmetic moves outputs by far more.
        meta["quantized_from"] = base
        meta["atol"] = 0.02 * max(float(o.max() - o.min()) for o in expected)
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return True


# Dynamically quantized sequence models -> (float base, MatMul form of
# quantize_dynamic.py): DynamicQuantizeLinear + MatMulInteger as ONNX
# Runtime's quantizer writes it, and the com.microsoft DynamicQuantizeMatMul
# its optimizer folds that into.
QUANTIZED_SEQUENCE = {"bert_4layer_int8": ("bert_4layer", "integer"),
                      "bert_4layer_int8_dqmm": ("bert_4layer", "dqmm")}


class FakeQuantizedMatMuls:
    """While active, every nn.Linear of `modules` (those the exporter wrote
    as MatMul: 3-D inputs) computes with its weight quantized as
    quantize_dynamic.py quantizes B (int8, per tensor, symmetric) and
    dequantized, on its input quantized as DynamicQuantizeLinear does it; the
    bias stays float (a float Add after the product, as in the graph)."""

    def __init__(self, modules):
        self.linears = [m for m in modules if isinstance(m, nn.Linear)]
        self.saved, self.hooks = [], []

    def __enter__(self):
        from quantize_dynamic import quantize_weight
        for linear in self.linears:
            q, scale, _ = quantize_weight(linear.weight.data.numpy().T)
            self.saved.append(linear.weight.data)
            linear.weight.data = torch.from_numpy((q.astype(np.float64) * scale[0]).astype(np.float32).T.copy())
            self.hooks.append(linear.register_forward_pre_hook(
                lambda module, args: (FakeQuantizedConvs.quantize(args[0]),)))
        return self

    def __exit__(self, *exc):
        for hook in self.hooks:
            hook.remove()
        for linear, w in zip(self.linears, self.saved):
            linear.weight.data = w


SETS = {"cnn": list(MODELS), "sequence": list(SEQUENCE_MODELS) + list(FUSED_MODELS) + list(QUANTIZED_SEQUENCE)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out_dir", nargs="?")
    p.add_argument("--small", action="store_true", help="64x64 versions for the CI agreement test")
    p.add_argument("--set", choices=sorted(SETS), default="cnn", help="the model set (default: cnn)")
    p.add_argument("--models", default="", help="comma-separated subset of the set (default: all of it)")
    p.add_argument("--list", action="store_true", help="print the set's model names and exit")
    p.add_argument("--opset", type=int, default=OPSET,
                   help=f"opset of torch's export (default {OPSET}; below 17 LayerNorm is decomposed, as most "
                        "Hugging Face exports are); the com.microsoft-fused models keep 17")
    args = p.parse_args()
    known = SETS[args.set]
    if args.list:
        print(",".join(known))
        return 0
    if not args.out_dir:
        p.error("OUT_DIR is required")
    if not 11 <= args.opset <= 17:
        p.error(f"--opset must be between 11 and 17 (torch's exporter here), received {args.opset}")
    globals()["OPSET"] = args.opset  # read by both exporters
    names = [n for n in args.models.split(",") if n] or known
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"gen_models.py: unknown model(s) {', '.join(unknown)} in set '{args.set}'; known: {', '.join(known)}",
              file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, len(os.sched_getaffinity(0))))
    warnings.filterwarnings("ignore", category=UserWarning)  # the exporter's notes on every model
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    for name in names:
        exporter = export_sequence if name in SETS["sequence"] else export
        if exporter(name, args.out_dir, args.small):
            print(f"exported {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
