#!/usr/bin/env python3
"""Exports the GPU model set with the torch of the machine it runs on.

  export_models.py OUT_DIR  ->  OUT_DIR/<name>.onnx and <name>_fp16.onnx, OUT_DIR/models.json

Models (random weights, fixed seed; nothing is downloaded): resnet50 and
mobilenet_v2 (torchvision, 3x224x224), bert_base (transformers BertModel with
bert-base-uncased's configuration, sequence 128), gpt2_like (GPT2Model with
GPT-2 small's configuration, sequence 128). The batch dimension is free
("batch"); float16 copies are exported from the half-precision module on the
GPU. models.json lists each file with its inputs (name, dims with -1 for the
batch, numpy dtype) for run.sh and compare.py.
"""
import json
import os
import sys

import torch


def export(module, args, names, path, dynamic):
    kwargs = dict(input_names=names, output_names=["output"], dynamic_axes=dynamic, opset_version=17)
    try:
        torch.onnx.export(module, args, path, dynamo=False, **kwargs)
    except TypeError:  # a torch without the dynamo switch
        torch.onnx.export(module, args, path, **kwargs)


class FirstOutput(torch.nn.Module):
    """A transformers model's last hidden state only: one output to compare."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *args):
        return self.inner(*args)[0]


def vision(name, factory, out_dir, listing):
    model = factory(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    inputs = [{"name": "input", "dims": [-1, 3, 224, 224], "dtype": "float32"}]
    for precision in ("fp32", "fp16"):
        path = os.path.join(out_dir, f"{name}{'' if precision == 'fp32' else '_fp16'}.onnx")
        m, a = (model, x) if precision == "fp32" else (model.half().cuda(), x.half().cuda())
        export(m, (a,), ["input"], path, {"input": {0: "batch"}, "output": {0: "batch"}})
        model = model.float().cpu()
        listing.append({"name": name, "precision": precision, "path": path,
                        "inputs": [dict(i, dtype="float16" if precision == "fp16" else "float32") for i in inputs]})


def transformer(name, build, out_dir, listing, seq=128):
    model = FirstOutput(build()).eval()
    ids = torch.randint(0, 1000, (1, seq))
    mask = torch.ones(1, seq, dtype=torch.int64)
    inputs = [{"name": "input_ids", "dims": [-1, seq], "dtype": "int64"},
              {"name": "attention_mask", "dims": [-1, seq], "dtype": "int64"}]
    dynamic = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch"}, "output": {0: "batch"}}
    for precision in ("fp32", "fp16"):
        path = os.path.join(out_dir, f"{name}{'' if precision == 'fp32' else '_fp16'}.onnx")
        m = model if precision == "fp32" else model.half().cuda()
        dev = "cpu" if precision == "fp32" else "cuda"
        export(m, (ids.to(dev), mask.to(dev)), ["input_ids", "attention_mask"], path, dynamic)
        model = model.float().cpu()
        listing.append({"name": name, "precision": precision, "path": path, "inputs": inputs})


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    import torchvision
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    listing = []
    vision("resnet50", torchvision.models.resnet50, out_dir, listing)
    vision("mobilenet_v2", torchvision.models.mobilenet_v2, out_dir, listing)
    transformer("bert_base", lambda: BertModel(BertConfig(), add_pooling_layer=False), out_dir, listing)
    transformer("gpt2_like", lambda: GPT2Model(GPT2Config(n_positions=256)), out_dir, listing)
    with open(os.path.join(out_dir, "models.json"), "w") as f:
        json.dump(listing, f, indent=1)
    print(f"exported {len(listing)} models to {out_dir}")


if __name__ == "__main__":
    main()
