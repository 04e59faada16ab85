#!/usr/bin/python3
"""Generates the ONNX backend node test cases into OUT_DIR.

Usage: gen_node_tests.py OUT_DIR [--force]

Writes OUT_DIR/<case>/model.onnx and OUT_DIR/<case>/test_data_set_N/{input_i.pb,
output_i.pb}, the layout of `python -m onnx.backend.test.cmd_tools generate-data`,
for the node cases of the installed onnx package only (no model or real cases).

Incremental: OUT_DIR/.stamp records the onnx and numpy versions and this script's
hash; when it matches, nothing is done. The stamp is written last, so an
interrupted run is redone from scratch the next time.
"""

import hashlib
import importlib
import os
import pkgutil
import shutil
import sys
import traceback

import numpy as np

# onnx 1.12's case modules still use aliases that numpy 1.24 removed.
for _alias, _type in (("float", float), ("bool", bool), ("object", object),
                      ("int", int), ("str", str), ("complex", complex)):
    if _alias not in np.__dict__:
        setattr(np, _alias, _type)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
import onnx.backend.test.case.node as node_cases  # noqa: E402

STAMP = ".stamp"


def stamp_text() -> str:
    with open(__file__, "rb") as f:
        script_hash = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"onnx {onnx.__version__} numpy {np.__version__} generator {script_hash}\n"


def collect_cases():
    """Imports every node case module. Returns the cases and the names of the
    modules that failed to import (each reported with its traceback); any such
    failure fails the run, since its op's cases would silently go missing."""
    node_cases._TargetOpType = None
    failed = []
    for _, name, _ in pkgutil.iter_modules(node_cases.__path__):
        module_name = f"{node_cases.__name__}.{name}"
        try:
            importlib.import_module(module_name)
        except Exception:  # report every broken module, not only the first
            failed.append(name)
            print(f"gen_node_tests: cannot import case module {name}:\n{traceback.format_exc()}",
                  file=sys.stderr)
    # Later cases with the same name replace earlier ones, as in cmd_tools.
    cases = {}
    for case in node_cases._NodeTestCases:
        cases[case.name] = case
    return cases, failed


def value_proto(value, value_info):
    kind = value_info.type.WhichOneof("value")
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name)
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name)
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name)
    tensor = numpy_helper.from_array(value, value_info.name)
    # numpy has no bfloat16: the cases hold bfloat16 values as their uint16 bit
    # patterns, which from_array tags UINT16. Tag them as the graph declares.
    if (value_info.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
            and tensor.data_type == onnx.TensorProto.UINT16):
        tensor.data_type = onnx.TensorProto.BFLOAT16
    return tensor


def write_case(out_dir: str, case) -> None:
    case_dir = os.path.join(out_dir, case.name)
    os.makedirs(case_dir)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for i, (inputs, outputs) in enumerate(case.data_sets):
        data_dir = os.path.join(case_dir, f"test_data_set_{i}")
        os.makedirs(data_dir)
        for prefix, values, infos in (("input", inputs, graph.input),
                                      ("output", outputs, graph.output)):
            for j, value in enumerate(values):
                with open(os.path.join(data_dir, f"{prefix}_{j}.pb"), "wb") as f:
                    f.write(value_proto(value, infos[j]).SerializeToString())


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--force"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = os.path.abspath(args[0])
    stamp_path = os.path.join(out_dir, STAMP)
    expected_stamp = stamp_text()
    if "--force" not in sys.argv and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            if f.read() == expected_stamp:
                print(f"gen_node_tests: {out_dir} is up to date ({expected_stamp.strip()})")
                return 0

    cases, failed_modules = collect_cases()
    if failed_modules:
        print(f"gen_node_tests: {len(failed_modules)} case module(s) failed to import: "
              f"{', '.join(failed_modules)}; nothing written", file=sys.stderr)
        return 1
    if not cases:
        print("gen_node_tests: no node test cases found", file=sys.stderr)
        return 1
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    for name in sorted(cases):
        write_case(out_dir, cases[name])
    with open(stamp_path, "w") as f:
        f.write(expected_stamp)
    print(f"gen_node_tests: wrote {len(cases)} node cases to {out_dir} (onnx {onnx.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
