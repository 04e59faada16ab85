#!/usr/bin/env python3
"""Exports image, sequence and transformer models to ONNX with torch.

usage: gen_zoo_models.py OUT_DIR [--large]

Each model gets OUT_DIR/<name>/model.onnx and test_data_set_0/{input_N,output_N}.pb,
where the outputs are computed by torch itself (an independent reference).
Random weights, fixed seed, made non-trivial before export (make_nontrivial):
every normalization layer gets random affine parameters, and batch norms
running statistics measured on random data and then perturbed; parameters
that torch initializes to one constant (ViT's zeroed head and class token,
ConvNeXt's 1e-6 layer scale, zeroed biases) are drawn at random, layer scales
in [0.5, 1]. A model whose reference output is near-constant (standard
deviation under MIN_OUTPUT_STD) is refused. Small shapes by default (tests): torchvision's
classification architectures (ResNet, MobileNet v2/v3, SqueezeNet, DenseNet,
ShuffleNet, EfficientNet, ConvNeXt, ViT, Swin), LSTM/GRU and transformer
encoders, and a small segmentation net, exported at opsets 9 to 17 so that
both the older and the newer forms of operators are covered. --large exports
the benchmark sizes (ResNet-50 at 224x224, a 12-layer BERT-base-like encoder).
Rewrites nothing when OUT_DIR/<name>/model.onnx already exists and
OUT_DIR's stamp names this script and the installed torch; otherwise those
models are exported again.
"""
import hashlib
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision


# A reference output with a smaller standard deviation is too close to a
# constant for rtol 1e-3 / atol 1e-4 to tell a right engine from a wrong one.
MIN_OUTPUT_STD = 0.02


def stamp_text(large):
    with open(__file__, "rb") as f:
        script_hash = hashlib.sha256(f.read()).hexdigest()[:16]
    return (f"torch {torch.__version__} torchvision {torchvision.__version__} generator {script_hash}"
            f"{' large' if large else ''}\n")


def make_nontrivial(model, example, seed):
    """Replaces the parameters torch initializes to trivial values, so that
    folding, fusion and every residual branch change the output measurably:
    random affine parameters for every normalization layer; every other
    parameter that holds one constant (zeroed heads, biases and class tokens,
    1e-6 layer scales) drawn at random; and batch-norm running statistics set,
    in one pass over a random batch in the example's shape, from the mean and
    variance each batch norm sees, then perturbed (mean moved by up to a few
    tenths of a standard deviation, variance scaled by 0.6 to 1.4). Each batch
    norm is set in evaluation order from what the ones before it already
    produce, so the perturbations do not compound through a deep network."""
    g = torch.Generator().manual_seed(seed)

    def uniform(t, lo, hi):
        t.copy_(lo + (hi - lo) * torch.rand(t.shape, generator=g))

    def normal(t, std):
        t.copy_(std * torch.randn(t.shape, generator=g))

    def set_statistics(module, inputs):
        x = inputs[0]
        dims = [d for d in range(x.dim()) if d != 1]
        mean, var = x.mean(dims), x.var(dims)
        module.running_mean.copy_(mean + 0.2 * var.sqrt() * torch.randn(mean.shape, generator=g))
        module.running_var.copy_(var * (0.6 + 0.8 * torch.rand(var.shape, generator=g)) + 1e-3)

    norm_types = (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm)
    norms = [m for m in model.modules() if isinstance(m, norm_types)]
    batch_norms = [m for m in norms if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    model.eval()
    with torch.no_grad():
        normed = set()
        for m in norms:
            if m.weight is not None:
                uniform(m.weight, 0.5, 1.5)
                normed.add(id(m.weight))
            if m.bias is not None:
                normal(m.bias, 0.3)
                normed.add(id(m.bias))
        for name, p in model.named_parameters():
            if id(p) in normed or p.numel() < 2 or p.std() > 0:
                continue
            if "layer_scale" in name:
                uniform(p, 0.5, 1.0)
            elif p.dim() == 1:
                normal(p, 0.2)
            else:
                normal(p, (p.numel() // p.shape[0]) ** -0.5)
        if batch_norms:
            hooks = [m.register_forward_pre_hook(set_statistics) for m in batch_norms]
            model(torch.randn((max(8, example.shape[0]),) + tuple(example.shape[1:]), generator=g))
            for h in hooks:
                h.remove()


def save_tensor(path, array, name):
    from onnx import numpy_helper
    t = numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


class Encoder(nn.Module):
    """BERT-like: token + position embeddings, post-norm transformer layers."""

    def __init__(self, vocab, hidden, heads, layers, seq, causal=False):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "qkv": nn.Linear(hidden, 3 * hidden),
                "proj": nn.Linear(hidden, hidden),
                "ln1": nn.LayerNorm(hidden),
                "fc1": nn.Linear(hidden, 4 * hidden),
                "fc2": nn.Linear(4 * hidden, hidden),
                "ln2": nn.LayerNorm(hidden),
            }))
        self.heads = heads
        self.causal = causal
        self.head = nn.Linear(hidden, vocab if causal else 2)

    def forward(self, ids):
        b, s = ids.shape
        positions = torch.arange(s).unsqueeze(0)
        x = self.tok(ids) + self.pos(positions)
        h = x.shape[-1]
        d = h // self.heads
        for layer in self.layers:
            qkv = layer["qkv"](x).reshape(b, s, 3, self.heads, d).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = torch.matmul(q, k.transpose(-1, -2)) / (d ** 0.5)
            if self.causal:
                mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
                scores = scores + mask
            attn = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, h)
            if self.causal:  # GPT-2: pre-norm
                x = x + layer["proj"](ctx)
                x = x + layer["fc2"](torch.nn.functional.gelu(layer["fc1"](layer["ln2"](x))))
            else:  # BERT: post-norm
                x = layer["ln1"](x + layer["proj"](ctx))
                x = layer["ln2"](x + layer["fc2"](torch.nn.functional.gelu(layer["fc1"](x))))
        if self.causal:
            return self.head(x)
        return self.head(x[:, 0])


class LstmClassifier(nn.Module):
    """Two stacked bidirectional LSTM layers, batch-first, then a linear head."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(64, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class GruClassifier(nn.Module):
    """A sequence-major GRU whose last hidden state feeds a linear head."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(16, 24)
        self.fc = nn.Linear(24, 3)

    def forward(self, x):
        _, h = self.gru(x)
        return self.fc(h[-1])


class PreNormEncoder(nn.Module):
    """torch.nn.TransformerEncoder (pre-norm), mean-pooled."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.fc = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc(self.encoder(x).mean(1))


class TinySegmenter(nn.Module):
    """Conv-BN-LeakyReLU, ceil-mode pooling, transposed conv, Hardswish, bilinear
    resize and a sigmoid: the decoder-side ops of segmentation nets."""

    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1),
                                  nn.MaxPool2d(2, ceil_mode=True))
        self.up = nn.Sequential(nn.ConvTranspose2d(8, 8, 2, stride=2), nn.Hardswish(),
                                nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False))
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        return torch.sigmoid(self.out(self.up(self.down(x))))


def models(large):
    torch.manual_seed(7)
    if large:
        yield "resnet50", torchvision.models.resnet50(), torch.randn(1, 3, 224, 224), "image"
        yield "bert_base", Encoder(30522, 768, 12, 12, 128), torch.randint(0, 30522, (1, 128)), "input_ids"
        return
    yield "resnet18", torchvision.models.resnet18(num_classes=10), torch.randn(2, 3, 64, 64), "image"
    yield "mobilenet_v2", torchvision.models.mobilenet_v2(width_mult=0.5, num_classes=10), \
        torch.randn(2, 3, 64, 64), "image"
    yield "bert_tiny", Encoder(1000, 64, 4, 2, 16), torch.randint(0, 1000, (2, 16)), "input_ids"
    yield "gpt2_tiny", Encoder(1000, 64, 4, 2, 16, causal=True), torch.randint(0, 1000, (2, 16)), "input_ids"
    tv = torchvision.models
    image = torch.randn(1, 3, 64, 64)
    # (name, model, example, input name, opset): opsets spread over the range
    # models in the wild were exported with.
    yield "squeezenet_op9", tv.squeezenet1_1(num_classes=10), image, "image", 9
    yield "densenet_op11", tv.densenet121(num_classes=10), image, "image", 11
    yield "shufflenet_op13", tv.shufflenet_v2_x0_5(num_classes=10), image, "image", 13
    yield "efficientnet_op13", tv.efficientnet_b0(num_classes=10), image, "image", 13
    yield "mobilenet_v3_op17", tv.mobilenet_v3_small(num_classes=10), image, "image", 17
    yield "convnext_op17", tv.convnext_tiny(num_classes=10), image, "image", 17
    yield "vit_op17", tv.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                                           mlp_dim=128, num_classes=10), torch.randn(1, 3, 32, 32), "image", 17
    yield "swin_op17", tv.swin_t(num_classes=10), image, "image", 17
    yield "lstm_op11", LstmClassifier(), torch.randn(2, 7, 16), "sequence", 11
    yield "gru_op13", GruClassifier(), torch.randn(5, 2, 16), "sequence", 13
    yield "encoder_op17", PreNormEncoder(), torch.randn(2, 6, 32), "tokens", 17
    yield "segmenter_op13", TinySegmenter(), torch.randn(1, 3, 15, 15), "image", 13


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out = sys.argv[1]
    large = "--large" in sys.argv[2:]
    stamp_path = os.path.join(out, ".stamp-large" if large else ".stamp")
    stamp = stamp_text(large)
    current = False
    if os.path.exists(stamp_path):
        with open(stamp_path) as f:
            current = f.read() == stamp
    for index, (name, model, example, input_name, *opset) in enumerate(models(large)):
        path = os.path.join(out, name)
        if current and os.path.exists(os.path.join(path, "model.onnx")):
            continue
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(os.path.join(path, "test_data_set_0"))
        make_nontrivial(model, example, seed=100 + index)
        with torch.no_grad():
            expected = model(example)
        if expected.float().std().item() < MIN_OUTPUT_STD:
            shutil.rmtree(path)
            sys.exit(f"gen_zoo_models: {name}: reference output std {expected.float().std().item():.3g} "
                     f"< {MIN_OUTPUT_STD}: too close to a constant to check anything")
        torch.onnx.export(model, (example,), os.path.join(path, "model.onnx"), opset_version=(opset or [14])[0],
                          input_names=[input_name], output_names=["output"],
                          dynamic_axes={input_name: {0: "batch"}, "output": {0: "batch"}})
        save_tensor(os.path.join(path, "test_data_set_0", "input_0.pb"), example.numpy(), input_name)
        save_tensor(os.path.join(path, "test_data_set_0", "output_0.pb"), expected.numpy(), "output")
        print(f"gen_zoo_models: {name}: reference output std {expected.float().std().item():.3g}, "
              f"max |value| {expected.abs().max().item():.3g}")
    with open(stamp_path, "w") as f:
        f.write(stamp)


if __name__ == "__main__":
    main()
