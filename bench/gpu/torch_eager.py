#!/usr/bin/env python3
"""PyTorch eager latency on the GPU for the model set, the peer of run.sh's figures.

  torch_eager.py NAME PRECISION BATCH  ->  one JSON line with median_ms

Same architectures and shapes as export_models.py, random weights; each
timed iteration is one forward with torch.cuda.synchronize() after it
(30 warm-up, 100 timed), under torch.inference_mode().
"""
import json
import statistics
import sys
import time

import torch


def build(name):
    import torchvision
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model
    if name == "resnet50":
        return torchvision.models.resnet50(weights=None), "vision"
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), "vision"
    if name == "bert_base":
        return BertModel(BertConfig(), add_pooling_layer=False), "text"
    return GPT2Model(GPT2Config(n_positions=256)), "text"


def main():
    name, precision, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model, kind = build(name)
    model = model.eval().cuda()
    dtype = torch.float16 if precision == "fp16" else torch.float32
    model = model.to(dtype)
    if kind == "vision":
        args = (torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype),)
    else:
        args = (torch.randint(0, 1000, (batch, 128), device="cuda"), torch.ones(batch, 128, dtype=torch.int64, device="cuda"))
    times = []
    with torch.inference_mode():
        for i in range(130):
            torch.cuda.synchronize()
            start = time.perf_counter()
            model(*args)
            torch.cuda.synchronize()
            if i >= 30:
                times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"engine": "torch_eager", "model": name, "precision": precision, "batch": batch,
                      "median_ms": statistics.median(times), "min_ms": min(times)}))


if __name__ == "__main__":
    main()
