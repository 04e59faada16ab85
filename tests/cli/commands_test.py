#!/usr/bin/env python3
"""`onyx run` and `onyx inspect` as a user runs them: exit status, stdout and
stderr on a good model, on files that are not models, on models onyx cannot
run (an op of an unknown domain, an opset newer than it supports), on bad
inputs and on bad flags. Models are built with onnx.helper; expected outputs
come from numpy.

usage: commands_test.py --onyx BIN
Prints "PASS name" / "FAIL name: reason" per case and "N passed, M failed";
exits non-zero on any failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def write_models(tmp):
    """good: Y = Relu(X @ W), X [batch, 4], and Z = X summed over axis 1, a second
    output; unknown_domain: two ops of domain com.example (one used twice) around
    a Relu; opset24: Relu at the default domain's opset 24, newer than the engine
    knows; garbage: bytes that are not a ModelProto."""
    paths = {}
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Relu", ["XW"], ["Y"]),
         helper.make_node("ReduceSum", ["X", "axes"], ["Z"], keepdims=0)],
        "dense", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["batch"])],
        [numpy_helper.from_array(W, "W"), numpy_helper.from_array(np.array([1], np.int64), "axes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    paths["good"] = os.path.join(tmp, "good.onnx")
    onnx.save(model, paths["good"])

    graph = helper.make_graph(
        [helper.make_node("Frobnicate", ["X"], ["A"], domain="com.example", name="first"),
         helper.make_node("Relu", ["A"], ["B"]),
         helper.make_node("Blorp", ["B"], ["C"], domain="com.example", name="blorp"),
         helper.make_node("Frobnicate", ["C"], ["Y"], domain="com.example", name="last")], "unknown_domain",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    paths["unknown_domain"] = os.path.join(tmp, "unknown_domain.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                      helper.make_opsetid("com.example", 1)]),
              paths["unknown_domain"])

    graph = helper.make_graph(
        [helper.make_node("Relu", ["X"], ["Y"])], "opset24",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 8
    paths["opset24"] = os.path.join(tmp, "opset24.onnx")
    onnx.save(model, paths["opset24"])

    # clamp: Y = Clamp01(X) of the example custom-op library (examples/custom_op).
    graph = helper.make_graph(
        [helper.make_node("Clamp01", ["X"], ["Y"], domain="com.example", name="clamp")], "clamp",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 4])])
    paths["clamp"] = os.path.join(tmp, "clamp.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                      helper.make_opsetid("com.example", 1)]), paths["clamp"])

    paths["garbage"] = os.path.join(tmp, "garbage.onnx")
    with open(paths["garbage"], "wb") as f:
        f.write(b"\x08\x07this is not a model\xff\xff")
    paths["missing"] = os.path.join(tmp, "no_such_model.onnx")
    return paths


def write_inputs(directory, x):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "X").SerializeToString())
    return directory


def build_cases(onyx, tmp):
    models = write_models(tmp)
    x = np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32)
    inputs = write_inputs(os.path.join(tmp, "inputs"), x)
    wrong_shape = write_inputs(os.path.join(tmp, "wrong_shape"), np.ones((2, 5), np.float32))
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)

    def onyx_cmd(*args):
        return subprocess.run([onyx] + list(args), capture_output=True, text=True, timeout=120)

    def expect(res, code, stderr_has=(), stdout_has=()):
        where = "exit %d, stdout %r, stderr %r" % (res.returncode, res.stdout[-400:], res.stderr[-400:])
        check(res.returncode == code, "want exit %d: %s" % (code, where))
        for text in stderr_has:
            check(text in res.stderr, "stderr lacks %r: %s" % (text, where))
        for text in stdout_has:
            check(text in res.stdout, "stdout lacks %r: %s" % (text, where))
        if code != 0:  # one line with the reason, nothing on stdout
            check(res.stdout == "" and res.stderr.count("\n") == 1, "want one stderr line only: %s" % where)

    def run_good():
        out = os.path.join(tmp, "out_good")
        res = onyx_cmd("run", "--model", models["good"], "--inputs", inputs, "--outputs", out)
        expect(res, 0)
        check(res.stderr == "", "stderr %r on success" % res.stderr)
        y = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
        z = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_1.pb")))
        want_y = np.maximum(x.astype(np.float64) @ W, 0)
        check(y.shape == (5, 3) and np.allclose(y, want_y, rtol=1e-5, atol=1e-6),
              "output_0 %r, numpy %r" % (y, want_y))
        check(z.shape == (5,) and np.allclose(z, x.sum(axis=1), rtol=1e-5, atol=1e-6),
              "output_1 %r, numpy %r" % (z, x.sum(axis=1)))
        check(sorted(os.listdir(out)) == ["output_0.pb", "output_1.pb"], "wrote %r" % os.listdir(out))

    def run_not_a_model():
        expect(onyx_cmd("run", "--model", models["garbage"], "--inputs", inputs, "--outputs", tmp), 1,
               stderr_has=("onyx run: ", "is not a valid ONNX ModelProto", models["garbage"]))

    def run_missing_model():
        expect(onyx_cmd("run", "--model", models["missing"], "--inputs", inputs, "--outputs", tmp), 1,
               stderr_has=("onyx run: cannot open model file '%s'" % models["missing"],))

    def run_unknown_domain():
        expect(onyx_cmd("run", "--model", models["unknown_domain"], "--inputs", inputs, "--outputs", tmp), 1,
               stderr_has=("no execution provider can run", "Frobnicate", "(opset version 1",
                           "no kernels for domain 'com.example'"))

    def run_newer_opset():
        expect(onyx_cmd("run", "--model", models["opset24"], "--inputs", inputs, "--outputs", tmp), 1,
               stderr_has=("default-domain opset 24 is newer than the supported 23",))

    def run_missing_input_file():
        expect(onyx_cmd("run", "--model", models["good"], "--inputs", empty, "--outputs", tmp), 1,
               stderr_has=("missing input file %s/input_0.pb for input 'X'" % empty,))

    def run_wrong_input_shape():
        out = os.path.join(tmp, "out_wrong")
        expect(onyx_cmd("run", "--model", models["good"], "--inputs", wrong_shape, "--outputs", out), 1,
               stderr_has=("input 'X' expects shape [batch,4], received [2,5]",))
        check(not os.path.exists(out), "a failed run created %s" % out)

    def run_bad_flags():
        expect(onyx_cmd("run", "--model", models["good"], "--inputs", inputs, "--outputs", tmp, "--bogus", "1"), 2,
               stderr_has=("unknown flag '--bogus'",))
        expect(onyx_cmd("run", "--model", models["good"], "--inputs", inputs), 2,
               stderr_has=("missing required flag --outputs",))
        expect(onyx_cmd("run", "--model", models["good"], "--inputs", inputs, "--outputs", tmp, "--optimization",
                        "turbo"), 2, stderr_has=("turbo", "see onyx run --help"))

    def inspect_good():
        res = onyx_cmd("inspect", models["good"], "--optimization", "disabled")
        expect(res, 0, stdout_has=(
            "model: %s\n" % models["good"],
            "inputs:\n  X: float [batch,4]\n",
            "outputs:\n  Y: float [batch,3]\n  Z: float [batch]\n",
            "partition report:", "provider cpu: 3 nodes", "cpu fallback nodes: 0"))
        histogram = {}
        section = res.stdout.split("op histogram:\n")[1].split("partition report:")[0]
        for line in section.splitlines():
            name, count = line.rsplit(None, 1)
            histogram[name.strip()] = int(count)
        check(histogram == {"MatMul": 1, "Relu": 1, "ReduceSum": 1, "(total)": 3}, "histogram %r" % histogram)
        check(res.stderr == "", "stderr %r on success" % res.stderr)

    def inspect_not_a_model():
        expect(onyx_cmd("inspect", models["garbage"]), 1,
               stderr_has=("onyx inspect: ", "is not a valid ONNX ModelProto"))
        expect(onyx_cmd("inspect", models["missing"]), 1,
               stderr_has=("onyx inspect: cannot open model file '%s'" % models["missing"],))

    def inspect_unsupported():
        # Every unsupported op is named at once, each with its nodes.
        expect(onyx_cmd("inspect", models["unknown_domain"]), 1,
               stderr_has=("no execution provider can run 3 nodes",
                           "com.example.Frobnicate (opset version 1, inputs float) at Frobnicate 'first'",
                           "com.example.Blorp (opset version 1) at Blorp 'blorp'",
                           "com.example.Frobnicate (opset version 1) at Frobnicate 'last'",
                           "no kernels for domain 'com.example'"))
        expect(onyx_cmd("inspect", models["opset24"]), 1,
               stderr_has=("default-domain opset 24 is newer than the supported 23",))

    def inspect_unavailable_provider():
        # A provider this host cannot offer: its nodes fall back, counted, unless required.
        res = onyx_cmd("inspect", models["good"], "--providers", "nosuch,cpu")
        expect(res, 0, stdout_has=("provider nosuch unavailable: ", "libonyx_provider_nosuch.so",
                                   "cpu fallback nodes: 3"))
        expect(onyx_cmd("inspect", models["good"], "--providers", "nosuch,cpu", "--require-providers"), 1,
               stderr_has=("execution provider 'nosuch' (required)", "libonyx_provider_nosuch.so"))

    def run_custom_op_library():
        library = os.path.join(os.path.dirname(os.path.abspath(onyx)), "libonyx_example_ops.so")
        out = os.path.join(tmp, "out_clamp")
        res = onyx_cmd("run", "--model", models["clamp"], "--inputs", inputs, "--outputs", out,
                       "--custom-op-library", library)
        expect(res, 0)
        y = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
        check(y.shape == (5, 4) and np.array_equal(y, np.clip(x, 0, 1)), "Clamp01 gave %r" % y)
        expect(onyx_cmd("inspect", models["clamp"], "--custom-op-library", library), 0,
               stdout_has=("provider custom_ops: 1 nodes", "cpu fallback nodes: 0"))
        expect(onyx_cmd("run", "--model", models["clamp"], "--inputs", inputs, "--outputs", out,
                        "--custom-op-library", os.path.join(tmp, "nope.so")), 1,
               stderr_has=("custom op library %s" % os.path.join(tmp, "nope.so"),))

    def inspect_bad_flags():
        expect(onyx_cmd("inspect"), 2, stderr_has=("no model given",))
        expect(onyx_cmd("inspect", models["good"], models["good"]), 2, stderr_has=("more than one model given",))
        expect(onyx_cmd("inspect", models["good"], "--frobnicate"), 2, stderr_has=("unknown flag '--frobnicate'",))
        expect(onyx_cmd("inspect", models["good"], "--optimization"), 2,
               stderr_has=("missing value for flag '--optimization'",))

    return [(f.__name__, f) for f in (
        run_good, run_not_a_model, run_missing_model, run_unknown_domain, run_newer_opset, run_missing_input_file,
        run_wrong_input_shape, run_bad_flags, inspect_good, inspect_not_a_model, inspect_unsupported,
        inspect_unavailable_provider, run_custom_op_library, inspect_bad_flags)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyx", required=True)
    args = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="onyx_cli_commands_") as tmp:
        for name, fn in build_cases(args.onyx, tmp):
            try:
                fn()
                print("PASS %s" % name)
                passed += 1
            except (Failure, OSError, subprocess.TimeoutExpired) as e:
                print("FAIL %s: %s" % (name, e))
                failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
