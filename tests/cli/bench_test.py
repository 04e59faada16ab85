#!/usr/bin/env python3
"""`onyx bench` on small models built with onnx.helper: the JSON line's fields,
shape resolution from --batch / --dim / --shape, index ranges for integer
inputs, and a clear error (exit 2, naming the flag and the value) for every
bad flag.

usage: bench_test.py --onyx BIN
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def dense_model(path, batch="batch"):
    """Y = Relu(X @ W), X [batch, 4] (batch a named free dim, or a fixed number)."""
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Relu", ["XW"], ["Y"])], "dense",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [batch, 3])], [w])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def embedding_model(path):
    """ids int64 [batch, seq] indexes a 7-row table directly; pos int32 [batch, seq]
    indexes a 5-row table through Cast; len int64 [batch] feeds no Gather.
    Indices at or past a table's size make Gather fail, so a bench run that
    succeeds on 4 x 50 draws of each has kept them in range."""
    table = numpy_helper.from_array(np.ones((7, 4), dtype=np.float32), "table")
    positions = numpy_helper.from_array(np.ones((5, 4), dtype=np.float32), "positions")
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["tok"]),
        helper.make_node("Cast", ["pos"], ["pos64"], to=TensorProto.INT64),
        helper.make_node("Gather", ["positions", "pos64"], ["emb"], axis=0),
        helper.make_node("Add", ["tok", "emb"], ["out"]),
        helper.make_node("Cast", ["len"], ["len_f"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes, "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("pos", TensorProto.INT32, ["batch", "seq"]),
         helper.make_tensor_value_info("len", TensorProto.INT64, ["batch"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", 4]),
         helper.make_tensor_value_info("len_f", TensorProto.FLOAT, ["batch"])],
        [table, positions])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


class Checker:
    def __init__(self, onyx):
        self.onyx = onyx
        self.failures = []

    def check(self, condition, what):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            self.failures.append(what)

    def bench(self, *args):
        p = subprocess.run([self.onyx, "bench", *args], capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def good(self, label, *args):
        code, out, err = self.bench(*args)
        self.check(code == 0, f"{label}: exits 0 (stderr: {err.strip()[:200]})")
        lines = out.strip().splitlines()
        self.check(len(lines) == 1, f"{label}: prints exactly one line")
        try:
            return json.loads(lines[-1])
        except (ValueError, IndexError):
            self.check(False, f"{label}: the line is JSON: {out[:200]!r}")
            return {}

    def bad(self, label, args, code, *needles):
        got, out, err = self.bench(*args)
        self.check(got == code, f"{label}: exits {code} (got {got}; stderr: {err.strip()[:200]})")
        self.check(out == "", f"{label}: prints nothing on stdout")
        for needle in needles:
            self.check(needle in err, f"{label}: stderr names {needle!r} ({err.strip()[:200]})")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onyx", required=True)
    args = p.parse_args()
    c = Checker(args.onyx)
    with tempfile.TemporaryDirectory() as tmp:
        dense = dense_model(os.path.join(tmp, "dense.onnx"))
        fixed = dense_model(os.path.join(tmp, "fixed.onnx"), batch=1)
        embed = embedding_model(os.path.join(tmp, "embed.onnx"))

        r = c.good("dense defaults", dense, "--threads", "1", "--iterations", "7", "--warmup", "2")
        for field in ["engine", "model", "providers", "threads", "batch", "inputs", "seed", "warmup", "iterations",
                      "session_ms", "median_ms", "p90_ms", "min_ms", "mean_ms", "peak_rss_mb", "start_rss_mb"]:
            c.check(field in r, f"dense: field {field}")
        c.check(r.get("engine") == "onyx" and r.get("model") == dense, "dense: engine and model path")
        c.check(r.get("threads") == 1 and r.get("batch") == 1, "dense: threads 1, batch 1 (the default)")
        c.check(r.get("iterations") == 7 and r.get("warmup") == 2, "dense: iterations and warmup as given")
        c.check(r.get("inputs") == {"X": {"type": "float", "shape": [1, 4], "low": -1, "high": 1}},
                f"dense: input X float [1,4] in [-1,1): {r.get('inputs')}")
        if all(k in r for k in ["min_ms", "median_ms", "p90_ms", "mean_ms", "session_ms"]):
            c.check(0 < r["min_ms"] <= r["median_ms"] <= r["p90_ms"], "dense: 0 < min <= median <= p90")
            c.check(r["min_ms"] <= r["mean_ms"], "dense: min <= mean")
            c.check(r["session_ms"] > 0, "dense: session creation time > 0")
        if "peak_rss_mb" in r:
            c.check(r["peak_rss_mb"] >= r["start_rss_mb"] > 1, "dense: peak RSS >= start RSS > 1 MB")
        c.check("op_ms" not in r, "dense: no op_ms without --op-stats")

        r = c.good("dense --batch 5 --op-stats", dense, "--batch", "5", "--threads", "2", "--iterations", "3",
                   "--op-stats")
        c.check(r.get("batch") == 5 and r.get("inputs", {}).get("X", {}).get("shape") == [5, 4],
                f"dense --batch 5: X is [5,4]: {r.get('inputs')}")
        c.check(r.get("threads") == 2, "dense --threads 2: reported")
        ops = r.get("op_ms", {})
        c.check(bool(ops) and all(v >= 0 for v in ops.values()) and
                any(k in ops for k in ("MatMul", "FusedMatMul")),
                f"dense --op-stats: per-op times include the MatMul: {ops}")
        r = c.good("dense --node-stats 1", dense, "--iterations", "3", "--node-stats", "1")
        nodes = r.get("node_ms", [])
        c.check(len(nodes) == 1 and len(nodes[0]) == 3 and nodes[0][1] in ("MatMul", "FusedMatMul", "Gemm")
                and nodes[0][2] >= 0, f"dense --node-stats 1: one node, the product: {nodes}")
        r = c.good("dense --shape", dense, "--shape", "X=3,4", "--iterations", "1", "--warmup", "0")
        c.check(r.get("inputs", {}).get("X", {}).get("shape") == [3, 4], "dense --shape X=3,4: X is [3,4]")
        r = c.good("dense --dim batch=6", dense, "--dim", "batch=6", "--iterations", "1")
        c.check(r.get("inputs", {}).get("X", {}).get("shape") == [6, 4], "dense --dim batch=6: X is [6,4]")
        c.good("fixed model, --batch equal to its batch", fixed, "--batch", "1", "--iterations", "1")

        r = c.good("embedding", embed, "--batch", "4", "--dim", "seq=50", "--iterations", "3", "--seed", "9")
        inputs = r.get("inputs", {})
        c.check(inputs.get("ids") == {"type": "int64", "shape": [4, 50], "low": 0, "high": 7},
                f"embedding: ids [4,50] in [0,7) (the table's rows): {inputs.get('ids')}")
        c.check(inputs.get("pos") == {"type": "int32", "shape": [4, 50], "low": 0, "high": 5},
                f"embedding: pos in [0,5) through its Cast: {inputs.get('pos')}")
        c.check(inputs.get("len") == {"type": "int64", "shape": [4], "low": 0, "high": 8},
                f"embedding: len (no Gather) in the default [0,8): {inputs.get('len')}")
        c.check(r.get("seed") == 9, "embedding: seed reported")

        bad_flags = [
            ("--threads 0", [dense, "--threads", "0"], "--threads", "'0'"),
            ("--threads abc", [dense, "--threads", "abc"], "--threads", "'abc'"),
            ("--threads 1x", [dense, "--threads", "1x"], "--threads", "'1x'"),
            ("--batch -1", [dense, "--batch", "-1"], "--batch", "'-1'"),
            ("--batch 99999999999999999999", [dense, "--batch", "99999999999999999999"], "--batch",
             "'99999999999999999999'"),
            ("--iterations 1.5", [dense, "--iterations", "1.5"], "--iterations", "'1.5'"),
            ("--iterations 0", [dense, "--iterations", "0"], "--iterations", "'0'"),
            ("--warmup -2", [dense, "--warmup", "-2"], "--warmup", "'-2'"),
            ("--seed x", [dense, "--seed", "x"], "--seed", "'x'"),
            ("--dim without =", [dense, "--dim", "batch"], "--dim", "'batch'"),
            ("--dim bad value", [dense, "--dim", "batch=two"], "--dim", "'batch=two'"),
            ("--dim zero", [dense, "--dim", "batch=0"], "--dim", "'batch=0'"),
            ("--dim twice", [dense, "--dim", "batch=2", "--dim", "batch=3"], "--dim", "batch=3"),
            ("--dim unknown name", [dense, "--dim", "height=3"], "--dim height=3", "'height'"),
            ("--shape bad dim", [dense, "--shape", "X=1,a"], "--shape", "'X=1,a'"),
            ("--shape empty dim", [dense, "--shape", "X=1,,4"], "--shape", "'X=1,,4'"),
            ("--shape unknown input", [dense, "--shape", "Z=1,4"], "--shape Z=1,4", "'Z'"),
            ("--shape wrong rank", [dense, "--shape", "X=1,4,1"], "--shape X=1,4,1", "rank 2"),
            ("--shape against a fixed dim", [dense, "--shape", "X=2,5"], "--shape X=2,5", "fixed to 4"),
            ("--batch on a fixed batch", [fixed, "--batch", "8"], "--batch 8", "[1,4]"),
            ("--batch and --dim disagree", [dense, "--batch", "2", "--dim", "batch=3"], "--batch 2", "--dim batch=3"),
            ("free dim left open", [embed, "--batch", "2"], "seq", "--dim seq=N"),
            ("--optimization bad", [dense, "--optimization", "fast"], "--optimization", "fast"),
            ("--node-stats zero", [dense, "--node-stats", "0"], "--node-stats", "0"),
            ("--providers empty", [dense, "--providers", ","], "--providers", "','"),
            ("unknown flag", [dense, "--fast"], "--fast"),
            ("missing value", [dense, "--threads"], "--threads"),
            ("no model", ["--threads", "1"], "no model"),
            ("two models", [dense, fixed], dense, fixed),
        ]
        for label, argv, *needles in bad_flags:
            c.bad(label, argv, 2, *needles)
        c.bad("missing model file", [os.path.join(tmp, "nope.onnx")], 1, "nope.onnx")
        c.bad("unknown provider", [dense, "--providers", "nosuch"], 1, "nosuch")
        code, out, _ = c.bench("--help")
        c.check(code == 0 and "--iterations" in out and "--dim NAME=VALUE" in out, "--help lists the flags")

    print(f"{len(c.failures)} failure(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
