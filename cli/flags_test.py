#!/usr/bin/python3
"""Test of the `onyx` tool's numeric flags: whole decimal integers in range.

usage: flags_test.py --onyx BIN --model-dir DIR

DIR is a demo model version directory (model.onnx and test_data_set_0/ with
input_0.pb and output_0.pb, as scripts/gen_demo_models.py writes them).
Checks that `onyx run --threads/--repeat` and `onyx inspect
--max-cpu-fallback` refuse values that are not whole integers in range
(a numeric prefix, a sign, a fraction, an overflow) with exit status 2 and a
message naming the flag, the range and the value, and that in-range values
run: `onyx run --threads 2 --repeat 3` writes output_0.pb equal to the
generator's expected output. Prints "PASS name" / "FAIL name: reason" and
"N passed, M failed"; exits non-zero on any failure.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyx", required=True)
    ap.add_argument("--model-dir", required=True)
    args = ap.parse_args()
    model = os.path.join(args.model_dir, "model.onnx")
    data = os.path.join(args.model_dir, "test_data_set_0")
    tmp = tempfile.mkdtemp(prefix="onyx_cli_flags_")
    outputs = os.path.join(tmp, "out")
    run_cmd = [args.onyx, "run", "--model", model, "--inputs", data, "--outputs", outputs]

    cases = []

    def refused(name, cmd, message):
        def case():
            res = run(cmd)
            if res.returncode != 2:
                return "exit %d, want 2 (stderr %r)" % (res.returncode, res.stderr)
            if message not in res.stderr:
                return "stderr %r does not say %r" % (res.stderr, message)
            return None
        cases.append((name, case))

    for value in ("4x", "-1", "1.5", "", "1025", "99999999999999999999"):
        refused("run_threads_%r" % value, run_cmd + ["--threads", value],
                "--threads expects an integer from 0 to 1024, received '%s'" % value)
    for value in ("0", "3abc", "+2", "2147483648"):
        refused("run_repeat_%r" % value, run_cmd + ["--repeat", value],
                "--repeat expects an integer from 1 to 2147483647, received '%s'" % value)
    for value in ("-1", "two", "99999999999999999999"):
        refused("inspect_max_cpu_fallback_%r" % value, [args.onyx, "inspect", model, "--max-cpu-fallback", value],
                "--max-cpu-fallback expects an integer from 0 to 9223372036854775807, received '%s'" % value)

    def in_range_values_run():
        res = run(run_cmd + ["--threads", "2", "--repeat", "3"])
        if res.returncode != 0:
            return "exit %d: %s" % (res.returncode, res.stderr)
        got = numpy_helper.to_array(onnx.load_tensor(os.path.join(outputs, "output_0.pb")))
        want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_0.pb")))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            return "output_0.pb differs from the expected output"
        res = run([args.onyx, "inspect", model, "--max-cpu-fallback", "0"])
        if res.returncode != 0:
            return "inspect --max-cpu-fallback 0: exit %d: %s" % (res.returncode, res.stderr)
        return None
    cases.append(("in_range_values_run", in_range_values_run))

    failed = 0
    try:
        for name, case in cases:
            failure = case()
            print("PASS %s" % name if failure is None else "FAIL %s: %s" % (name, failure))
            failed += failure is not None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (len(cases) - failed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
