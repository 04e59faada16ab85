#!/usr/bin/python3
"""CI agreement check of the comparison's model sets (CNNs and the
sequence set): their small versions (gen_models.py --small: CNNs at 64x64,
transformers with 2 layers and 32 tokens, recurrent models over 20 steps)
through `onyx run`, every output against torch's outputs recorded
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
    names = []
    for model_set in ("cnn", "sequence"):
        subprocess.run([sys.executable, os.path.join(here, "gen_models.py"), args.models_dir, "--small", "--set",
                        model_set], check=True)
        names += subprocess.run([sys.executable, os.path.join(here, "gen_models.py"), "--set", model_set, "--list"],
                                check=True, capture_output=True, text=True).stdout.strip().split(",")
    failed = []
    for name in names:
        case = os.path.join(args.models_dir, name)
        data = os.path.join(case, "test_data_set_0")
        with open(os.path.join(case, "meta.json")) as f:
            meta = json.load(f)
        wants = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"output_{j}.pb")))
                 for j in range(len(meta["outputs"]))]
        want = wants[0]
        problems = []
        if not want.std() > 1e-3:
            problems.append(f"torch's output is nearly constant (std {want.std():.2g})")
        worst_diff = 0.0
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([args.onyx, "run", "--model", os.path.join(case, "model.onnx"), "--inputs", data,
                                  "--outputs", out], capture_output=True, text=True)
            if run.returncode != 0:
                problems.append("onyx run failed: " + run.stderr.strip())
            else:
                for j, want in enumerate(wants):
                    got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, f"output_{j}.pb")))
                    if got.shape != want.shape:
                        problems.append(f"output {j}: shape {got.shape} != torch {want.shape}")
                        continue
                    worst_diff = max(worst_diff, float(np.abs(got - want).max()))
                    if not np.allclose(got, want, rtol=RTOL, atol=meta.get("atol", ATOL)):
                        worst = np.abs(got - want) - RTOL * np.abs(want)
                        problems.append(f"output {j}: max |onyx - torch| {np.abs(got - want).max():.3g}, worst "
                                        f"excess over rtol {worst.max():.3g} (output max {np.abs(want).max():.3g}, "
                                        f"atol {meta.get('atol', ATOL):.3g})")
        bench = subprocess.run([args.onyx, "bench", os.path.join(case, "model.onnx"), "--batch",
                                str(meta["reference_batch"]), "--iterations", "1", "--warmup", "0"]
                               + [x for d, v in meta.get("fixed_dims", {}).items() for x in ("--dim", f"{d}={v}")],
                               capture_output=True, text=True)
        if bench.returncode != 0:
            problems.append("onyx bench failed: " + bench.stderr.strip())
        if problems:
            failed.append(name)
            print(f"FAIL {name}: {'; '.join(problems)}")
        else:
            print(f"PASS {name}: max |onyx - torch| {worst_diff:.2g} over {len(wants)} output(s) (output max "
                  f"{max(float(np.abs(w).max()) for w in wants):.3g})")
    print(f"{len(names) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not names else 0


if __name__ == "__main__":
    sys.exit(main())
