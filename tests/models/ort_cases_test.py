#!/usr/bin/env python3
"""`onyx run` on the committed ort_cases (float16 models, a shuffled graph,
external data, 100 dynamically quantized ConvInteger layers, 50 MatMulInteger
ones, 20 QDQ Conv layers) against ONNX Runtime's recorded outputs (recorded
with its graph optimizations off: the ONNX-specified arithmetic).

usage: ort_cases_test.py --onyx BIN [--cases DIR]

Each case of EXPECTED runs at optimization levels `all` and `disabled` (or
those meta.json's "levels" names); every
output must have ONNX Runtime's element type and shape and lie within
meta.json's atol + rtol * |ort|. A reference whose standard deviation is under
MIN_REFERENCE_STD fails (it would accept a wrong engine). Prints
"PASS case (level): max |diff| D" / "FAIL case (level): reason" and
"N passed, M failed"; exits non-zero on any failure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

EXPECTED = ("cnn_external_data", "cnn_fp16", "cnn_fp16_weights", "cnn_shuffled", "dq_chain_100_int8",
            "dq_chain_100_uint8", "dq_matmul_chain_50_int8", "dq_matmul_chain_50_uint8", "qdq_conv_chain_20", "qdq_conv_fused_20", "qdq_matmul_fused_12",
            "qlinear_conv_chain_12", "qlinear_matmul_chain_12")
MIN_REFERENCE_STD = 0.02


def load(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


def check_case(onyx, case, level, tmp):
    meta = json.load(open(os.path.join(case, "meta.json")))
    data = os.path.join(case, "test_data_set_0")
    out = os.path.join(tmp, os.path.basename(case) + "_" + level)
    res = subprocess.run([onyx, "run", "--model", os.path.join(case, "model.onnx"), "--inputs", data,
                          "--outputs", out, "--optimization", level], capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        return "onyx run exited %d: %s" % (res.returncode, res.stderr.strip()[-800:]), None
    worst = 0.0
    n = 0
    while os.path.exists(os.path.join(data, "output_%d.pb" % n)):
        want = load(os.path.join(data, "output_%d.pb" % n))
        got_path = os.path.join(out, "output_%d.pb" % n)
        if not os.path.exists(got_path):
            return "onyx wrote no output_%d.pb" % n, None
        got = load(got_path)
        if got.dtype != want.dtype or got.shape != want.shape:
            return "output %d is %s %s, ONNX Runtime's is %s %s" % (n, got.dtype, got.shape, want.dtype,
                                                                   want.shape), None
        if want.astype(np.float64).std() < MIN_REFERENCE_STD:
            return "reference output %d is near-constant (std %.3g)" % (n, want.astype(np.float64).std()), None
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        bound = meta["atol"] + meta["rtol"] * np.abs(want.astype(np.float64))
        if not np.all(diff <= bound):
            i = np.unravel_index(np.argmax(diff - bound), diff.shape)
            return ("output %d differs at %s: onyx %r, ONNX Runtime %r (atol %g, rtol %g; %d elements out)" %
                    (n, list(i), got[i].item(), want[i].item(), meta["atol"], meta["rtol"],
                     int(np.sum(diff > bound)))), None
        worst = max(worst, float(diff.max()))
        n += 1
    if n == 0:
        return "the case has no recorded output", None
    return None, worst


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onyx", required=True)
    p.add_argument("--cases", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_cases", "cases"))
    args = p.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in EXPECTED:
            case = os.path.join(args.cases, name)
            meta_path = os.path.join(case, "meta.json")
            levels = json.load(open(meta_path)).get("levels", ["all", "disabled"]) if os.path.exists(meta_path) \
                else ["all", "disabled"]
            for level in levels:
                if not os.path.exists(os.path.join(case, "model.onnx")):
                    error, worst = "missing case %s" % case, None
                else:
                    error, worst = check_case(args.onyx, case, level, tmp)
                if error:
                    print("FAIL %s (%s): %s" % (name, level, error))
                    failed += 1
                else:
                    print("PASS %s (%s): max |diff| %.3g" % (name, level, worst))
                    passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
