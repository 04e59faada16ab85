#!/usr/bin/env python3
"""Writes each ONNX node-test case's tensors as raw files for the ONNX Runtime peer.

usage: export_cases.py CASES_DIR OUT_DIR
For every case with only tensor inputs and outputs: OUT_DIR/<case>/case.json
({"model", "inputs": [{"name","dtype","dims","file"}], "outputs": [...]}) and .bin files.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    cases, out = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(cases)):
        model_path = os.path.join(cases, name, "model.onnx")
        data = os.path.join(cases, name, "test_data_set_0")
        if not os.path.exists(model_path) or not os.path.isdir(data):
            continue
        model = onnx.load(model_path, load_external_data=False)
        initializers = {i.name for i in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in initializers]
        if any(i.type.WhichOneof("value") != "tensor_type" for i in list(inputs) + list(model.graph.output)):
            continue
        entry = {"model": os.path.abspath(model_path), "inputs": [], "outputs": []}
        os.makedirs(os.path.join(out, name), exist_ok=True)
        ok = True
        for kind, infos in (("input", inputs), ("output", model.graph.output)):
            for i, info in enumerate(infos):
                path = os.path.join(data, f"{kind}_{i}.pb")
                if not os.path.exists(path):
                    continue
                array = numpy_helper.to_array(onnx.load_tensor(path))
                if array.dtype == object or array.dtype.kind in "OSU":
                    ok = False
                    break
                file = os.path.join(out, name, f"{kind}_{i}.bin")
                np.ascontiguousarray(array).tofile(file)
                entry[kind + "s"].append({"name": info.name, "dtype": str(array.dtype), "dims": list(array.shape),
                                          "file": file})
        if ok:
            json.dump(entry, open(os.path.join(out, name, "case.json"), "w"))


if __name__ == "__main__":
    main()
