#!/usr/bin/python3
"""CI agreement check of the comparison's model set: the 64x64 versions
(gen_models.py --small) through `onyx run`, against torch's outputs recorded
when each model was exported (rtol 1e-3, atol 1e-4; the int8 variants'
own atol from meta.json, against torch emulating their integer arithmetic),
and `onyx bench` on each
with its shape fixed, as the benchmark runs it.

usage: agreement_test.py --onyx BIN --models-dir DIR
Fails when torch or torchvision cannot be imported: scripts/install-deps.sh
installs both, so their absence is a broken machine, not a reason to skip.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

RTOL, ATOL = 1e-3, 1e-4


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onyx", required=True)
    p.add_argument("--models-dir", required=True)
    args = p.parse_args()
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"FAIL: {e} (scripts/install-deps.sh installs python3-torch and python3-torchvision)")
        return 1
    import numpy as np
    import onnx
    from onnx import numpy_helper

    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "gen_models.py"), args.models_dir, "--small"], check=True)
    names = subprocess.run([sys.executable, os.path.join(here, "gen_models.py"), "--list"], check=True,
                           capture_output=True, text=True).stdout.strip().split(",")
    failed = []
    for name in names:
        case = os.path.join(args.models_dir, name)
        data = os.path.join(case, "test_data_set_0")
        with open(os.path.join(case, "meta.json")) as f:
            meta = json.load(f)
        want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_0.pb")))
        problems = []
        if not want.std() > 1e-3:
            problems.append(f"torch's output is nearly constant (std {want.std():.2g})")
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([args.onyx, "run", "--model", os.path.join(case, "model.onnx"), "--inputs", data,
                                  "--outputs", out], capture_output=True, text=True)
            if run.returncode != 0:
                problems.append("onyx run failed: " + run.stderr.strip())
            else:
                got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
                if got.shape != want.shape:
                    problems.append(f"shape {got.shape} != torch {want.shape}")
                elif not np.allclose(got, want, rtol=RTOL, atol=meta.get("atol", ATOL)):
                    worst = np.abs(got - want) - RTOL * np.abs(want)
                    problems.append(f"max |onyx - torch| {np.abs(got - want).max():.3g}, worst excess over "
                                    f"rtol {worst.max():.3g} (output max {np.abs(want).max():.3g}, atol "
                                    f"{meta.get('atol', ATOL):.3g})")
        bench = subprocess.run([args.onyx, "bench", os.path.join(case, "model.onnx"), "--batch",
                                str(meta["reference_batch"]), "--iterations", "1", "--warmup", "0"],
                               capture_output=True, text=True)
        if bench.returncode != 0:
            problems.append("onyx bench failed: " + bench.stderr.strip())
        if problems:
            failed.append(name)
            print(f"FAIL {name}: {'; '.join(problems)}")
        else:
            print(f"PASS {name}: max |onyx - torch| {np.abs(got - want).max():.2g} (output max "
                  f"{np.abs(want).max():.3g})")
    print(f"{len(names) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not names else 0


if __name__ == "__main__":
    sys.exit(main())
