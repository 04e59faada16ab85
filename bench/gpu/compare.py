#!/usr/bin/env python3
"""Writes seeded inputs for `onyx run` and compares two output folders.

  compare.py inputs MODELS_JSON_ENTRY_INDEX MODELS_JSON BATCH DIR   writes DIR/input_N.pb
  compare.py check A_DIR B_DIR RTOL                                 prints one JSON line

check: every output_N.pb of A against B's, elementwise |a - b| <= atol + rtol |b|
with atol = rtol (values near zero), NaN-free; exit 0 when all agree.
"""
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def write_inputs(index, models_json, batch, out_dir):
    entry = json.load(open(models_json))[index]
    rng = np.random.default_rng(0)
    os.makedirs(out_dir, exist_ok=True)
    for n, spec in enumerate(entry["inputs"]):
        dims = [batch if d < 0 else d for d in spec["dims"]]
        if spec["dtype"] == "int64":
            value = rng.integers(0, 1000, size=dims).astype(np.int64)
            if spec["name"] == "attention_mask":
                value = np.ones(dims, dtype=np.int64)
        else:
            value = rng.uniform(-1, 1, size=dims).astype(spec["dtype"])
        tensor = numpy_helper.from_array(value, spec["name"])
        with open(os.path.join(out_dir, f"input_{n}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())


def load(path):
    t = onnx.TensorProto()
    t.ParseFromString(open(path, "rb").read())
    return numpy_helper.to_array(t).astype(np.float64)


def check(a_dir, b_dir, rtol):
    worst = 0.0
    ok = True
    files = sorted(glob.glob(os.path.join(b_dir, "output_*.pb")))
    for path in files:
        a = load(os.path.join(a_dir, os.path.basename(path)))
        b = load(path)
        if a.shape != b.shape or not np.isfinite(a).all():
            ok = False
            continue
        excess = np.abs(a - b) - (rtol + rtol * np.abs(b))
        worst = max(worst, float(np.max(np.abs(a - b) / (rtol + np.abs(b)))))
        ok &= bool((excess <= 0).all())
    print(json.dumps({"outputs": len(files), "agree": ok and len(files) > 0, "worst_scaled_error": worst, "rtol": rtol}))
    return 0 if ok and files else 1


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        write_inputs(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], float(sys.argv[4])))
