#!/usr/bin/env python3
"""`onyx inspect` and `onyx run` on torch-exported image, sequence and transformer models.

usage: zoo_test.py --onyx BIN --models DIR

Models come from gen_zoo_models.py (torch exports with torch-computed reference
outputs). Each model of EXPECTED must be there: a missing model.onnx or
reference fails, and so does a reference whose standard deviation is under
MIN_REFERENCE_STD (a near-constant reference accepts a wrong engine). Each
model: inspect must succeed and print a partition report with no CPU
fallback; run (three times, so the later runs use the learned memory
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


# The models gen_zoo_models.py writes, kept here so that a model the generator
# stops writing fails instead of quietly leaving the run.
EXPECTED = (
    "bert_tiny", "convnext_op17", "densenet_op11", "efficientnet_op13", "encoder_op17", "gpt2_tiny",
    "gru_op13", "lstm_op11", "mobilenet_v2", "mobilenet_v3_op17", "resnet18", "segmenter_op13",
    "shufflenet_op13", "squeezenet_op9", "swin_op17", "vit_op17",
)
MIN_REFERENCE_STD = 0.02


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onyx", required=True)
    p.add_argument("--models", required=True)
    args = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "gen_zoo_models.py"), args.models], check=True)
    passed = failed = 0
    present = sorted(n for n in os.listdir(args.models) if os.path.isdir(os.path.join(args.models, n)))
    for name in sorted(set(present) - set(EXPECTED)):
        print(f"note: {name} is not in EXPECTED and is not run")
    for name in EXPECTED:
        case = os.path.join(args.models, name)
        model = os.path.join(case, "model.onnx")
        reference = os.path.join(case, "test_data_set_0", "output_0.pb")
        if not os.path.exists(model) or not os.path.exists(reference):
            failed += 1
            print(f"FAIL {name}: no {model if not os.path.exists(model) else reference}")
            continue
        want = numpy_helper.to_array(onnx.load_tensor(reference))
        if not want.std() >= MIN_REFERENCE_STD:
            failed += 1
            print(f"FAIL {name}: the torch reference is near-constant (std {want.std():.3g} "
                  f"< {MIN_REFERENCE_STD}), it cannot tell a right output from a wrong one")
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
    sys.exit(1 if failed or passed != len(EXPECTED) else 0)


if __name__ == "__main__":
    main()
