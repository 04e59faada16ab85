#!/usr/bin/python3
"""Smoke test of onyx_serving_bench against onyxd (completion and well-formed replies, no timing).

usage: smoke_test.py --onyxd BIN --proto-dir DIR --repo DIR --bench BIN

Starts onyxd on the demo repository and runs the benchmark's three modes for
about a second each: served ModelInfer on `mlp` and `cnn` at concurrency 2, the
empty ServerLive call, and the in-process engine at batch 2 from 2 threads. The
benchmark checks every reply's outputs, datatypes, shapes and byte counts and
exits non-zero on any bad one; this script checks each run completed calls
with zero errors and that rows = calls x batch, and that a model onyxd does
not serve is refused with onyxd's own reason. Prints PASS/FAIL per run.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
import python_client_test as e2e  # noqa: E402


def run_case(name, cmd, batch):
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    try:
        out = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return "FAIL %s: no JSON line (exit %d): %s" % (name, res.returncode, res.stderr.strip())
    problems = []
    if res.returncode != 0:
        problems.append("exit %d: %s %s" % (res.returncode, res.stderr.strip(), out.get("first_error")))
    if out.get("errors") != 0:
        problems.append("%s errors, first: %s" % (out.get("errors"), out.get("first_error")))
    if not out.get("items", 0) > 0:
        problems.append("no call completed")
    if out.get("rows") != out.get("items", 0) * batch:
        problems.append("rows %s != items %s x batch %d" % (out.get("rows"), out.get("items"), batch))
    return ("FAIL %s: %s" % (name, "; ".join(problems))) if problems else "PASS %s" % name


def refusal_case(name, cmd):
    """The benchmark must refuse a model onyxd does not serve: exit 1 with no
    result line and onyxd's NOT_FOUND reason, not a crash or numbers."""
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    problems = []
    if res.returncode != 1:
        problems.append("exit %d, want 1" % res.returncode)
    if res.stdout.strip():
        problems.append("printed a result: %s" % res.stdout.strip())
    for text in ("ModelMetadata('no_such_model')", "unknown model 'no_such_model'"):
        if text not in res.stderr:
            problems.append("stderr %r lacks %r" % (res.stderr.strip(), text))
    return ("FAIL %s: %s" % (name, "; ".join(problems))) if problems else "PASS %s" % name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyxd", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--bench", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="onyx_bench_smoke_") as tmp:
        return run(args, tmp)


def run(args, tmp):
    mods = e2e.stubs_in(args.proto_dir, tmp)
    if mods is None:
        return 1
    proc, address, _, failure = e2e.launch_onyxd(args.onyxd, args.repo, mods, tmp)
    lines = []
    try:
        if failure is None:
            t = ["--seconds", "1", "--warmup", "0.2"]
            for model in ("mlp", "cnn"):
                lines.append(run_case("served_%s" % model, [args.bench, "served", "--address", address, "--model",
                                                            model, "--concurrency", "2", "--batch", "1"] + t, 1))
            lines.append(run_case("empty", [args.bench, "empty", "--address", address] + t, 0))
            lines.append(run_case("engine_mlp", [args.bench, "engine", "--model-file",
                                                 os.path.join(args.repo, "mlp", "1", "model.onnx"),
                                                 "--batch", "2", "--threads", "2"] + t, 2))
            lines.append(refusal_case("unknown_model_fails", [args.bench, "served", "--address", address,
                                                              "--model", "no_such_model"] + t))
    finally:
        if proc is not None:
            e2e.stop(proc)
    if failure is not None:
        return 1
    for line in lines:
        print(line)
    failed = sum(line.startswith("FAIL") for line in lines)
    print("%d passed, %d failed" % (len(lines) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
