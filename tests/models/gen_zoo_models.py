#!/usr/bin/env python3
"""Exports ResNet-, MobileNet-, BERT- and GPT-2-like models to ONNX with torch.

usage: gen_zoo_models.py OUT_DIR [--large]

Each model gets OUT_DIR/<name>/model.onnx and test_data_set_0/{input_N,output_N}.pb,
where the outputs are computed by torch itself (an independent reference).
Random weights, fixed seed. Small shapes by default (tests); --large exports the
benchmark sizes (ResNet-50 at 224x224, a 12-layer BERT-base-like encoder).
Rewrites nothing when OUT_DIR/<name>/model.onnx already exists.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision


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


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out = sys.argv[1]
    large = "--large" in sys.argv[2:]
    for name, model, example, input_name in models(large):
        path = os.path.join(out, name)
        if os.path.exists(os.path.join(path, "model.onnx")):
            continue
        os.makedirs(os.path.join(path, "test_data_set_0"), exist_ok=True)
        model.eval()
        with torch.no_grad():
            expected = model(example)
        torch.onnx.export(model, (example,), os.path.join(path, "model.onnx"), opset_version=14,
                          input_names=[input_name], output_names=["output"],
                          dynamic_axes={input_name: {0: "batch"}, "output": {0: "batch"}})
        save_tensor(os.path.join(path, "test_data_set_0", "input_0.pb"), example.numpy(), input_name)
        save_tensor(os.path.join(path, "test_data_set_0", "output_0.pb"), expected.numpy(), "output")


if __name__ == "__main__":
    main()
