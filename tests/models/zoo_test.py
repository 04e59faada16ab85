#!/usr/bin/env python3
"""`onyx inspect` and `onyx run` on torch-exported image, sequence and transformer models.

usage: zoo_test.py --onyx BIN --models DIR

Models come from gen_zoo_models.py (torch exports with torch-computed reference
outputs). Each model: inspect must succeed and print a partition report with no
CPU fallback; run (three times, so the later runs use the learned memory
pattern) must match torch within rtol 1e-3, atol 1e-4.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onyx", required=True)
    p.add_argument("--models", required=True)
    args = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "gen_zoo_models.py"), args.models], check=True)
    passed = failed = 0
    for name in sorted(os.listdir(args.models)):
        case = os.path.join(args.models, name)
        model = os.path.join(case, "model.onnx")
        if not os.path.exists(model):
            continue
        problems = []
        inspect = subprocess.run([args.onyx, "inspect", model, "--max-cpu-fallback", "0"],
                                 capture_output=True, text=True)
        if inspect.returncode != 0 or "partition report" not in inspect.stdout:
            problems.append("inspect failed: " + (inspect.stderr.strip() or inspect.stdout[-200:]))
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([args.onyx, "run", "--model", model, "--inputs",
                                  os.path.join(case, "test_data_set_0"), "--outputs", out,
                                  "--repeat", "3"],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                problems.append("run failed: " + run.stderr.strip())
            else:
                got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
                want = numpy_helper.to_array(onnx.load_tensor(
                    os.path.join(case, "test_data_set_0", "output_0.pb")))
                if got.shape != want.shape:
                    problems.append(f"shape {got.shape} != torch {want.shape}")
                elif not np.allclose(got, want, rtol=1e-3, atol=1e-4):
                    problems.append(f"max abs diff {np.abs(got - want).max():.3g} vs torch")
        if problems:
            failed += 1
            print(f"FAIL {name}: {'; '.join(problems)}")
        else:
            passed += 1
            print(f"PASS {name}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or passed == 0 else 0)


if __name__ == "__main__":
    main()
