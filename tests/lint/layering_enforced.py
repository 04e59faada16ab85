#!/usr/bin/env python3
"""Proves that the build refuses upward includes.

For every engine layer and for the providers, takes the compile command of one
of its real sources from compile_commands.json and compiles scratch files with
it (-fsyntax-only):
  - one file per engine folder that includes a header of that folder: it must
    compile exactly when the layer may see the folder (engine/CMakeLists.txt,
    SEES), and otherwise fail with the header not found;
  - a copy of a real source with an upward include added (graph.cc including
    exec/, op_kernel.cc including exec/ — the old framework<->exec cycle — and a
    CPU kernel including session/): the copy must fail, the unmodified copy
    must compile.

usage: layering_enforced.py BUILD_DIR
"""

import concurrent.futures
import json
import pathlib
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import layering  # noqa: E402


def load_commands(build_dir):
    path = pathlib.Path(build_dir) / "compile_commands.json"
    if not path.exists():
        raise SystemExit(f"{path} is missing: configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON")
    return json.loads(path.read_text())


def command_for(entries, source_dir, view):
    """The compile command of a non-test source under source_dir built with `view`."""
    for e in entries:
        f = pathlib.Path(e["file"])
        cmd = e.get("command") or " ".join(shlex.quote(a) for a in e["arguments"])
        if (source_dir in f.parents and not f.name.endswith("_test.cc")
                and f"include_views/{view}" in cmd):
            return e["directory"], shlex.split(cmd), f
    raise SystemExit(f"no compile command for a source of {source_dir} using include view '{view}'")


def syntax_only(directory, argv, source, scratch):
    out = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        if pathlib.Path(a) == source or a == str(source):
            continue
        out.append(a)
    return subprocess.run(out + ["-fsyntax-only", str(scratch)], cwd=directory,
                          capture_output=True, text=True)


def lightest_header(folder):
    headers = [h for h in (layering.ENGINE / folder).glob("*.h")]
    if not headers:
        raise SystemExit(f"engine/{folder} has no header to include")
    return min(headers, key=lambda h: h.stat().st_size)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    entries = load_commands(sys.argv[1])
    layers = layering.engine_layers()
    folders = list(layers)
    scratch_dir = pathlib.Path(tempfile.mkdtemp(prefix="onyx_layering_"))

    jobs = []  # (description, directory, argv, source, scratch text, must compile)
    for layer, sees in layers.items():
        directory, argv, source = command_for(entries, layering.ENGINE / layer, f"onyx_{layer}")
        for folder in folders:
            header = lightest_header(folder).name
            jobs.append((f"{layer} includes {folder}/{header}", directory, argv, source,
                         f'#include "{folder}/{header}"\n', folder in sees))
    directory, argv, source = command_for(entries, layering.ROOT / "providers" / "cpu", "onyx_provider_cpu")
    for folder in folders:
        header = lightest_header(folder).name
        jobs.append((f"provider cpu includes {folder}/{header}", directory, argv, source,
                     f'#include "{folder}/{header}"\n', folder in layering.PROVIDER_SEES))

    # Real sources, with and without an upward include.
    for layer, rel, upward in (("graph", "engine/graph/graph.cc", "exec/execution_frame.h"),
                               ("framework", "engine/framework/op_kernel.cc", "exec/execution_frame.h"),
                               ("provider_cpu", "providers/cpu/math/softmax.cc", "session/provider_registry.h")):
        real = layering.ROOT / rel
        base = "engine" if layer != "provider_cpu" else "providers"
        directory, argv, source = command_for(entries, real.parent, f"onyx_{layer}")
        text = real.read_text()
        jobs.append((f"copy of {rel}", directory, argv, source, text, True))
        jobs.append((f"copy of {rel} + #include \"{upward}\"", directory, argv, source,
                     f'#include "{upward}"\n' + text, False))

    def run(index_job):
        index, (what, directory, argv, source, text, must_compile) = index_job
        scratch = scratch_dir / f"scratch_{index}.cc"
        scratch.write_text(text)
        result = syntax_only(directory, argv, source, scratch)
        compiled = result.returncode == 0
        if must_compile and not compiled:
            return f"FAIL {what}: should compile, but:\n{result.stderr[-2000:]}"
        if not must_compile:
            if compiled:
                return f"FAIL {what}: compiled, but this edge must be refused"
            if "No such file or directory" not in result.stderr:
                return f"FAIL {what}: failed for another reason than the missing header:\n{result.stderr[-2000:]}"
        return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f for f in pool.map(run, enumerate(jobs)) if f]
    for f in failures:
        print(f)
    refused = sum(1 for j in jobs if not j[5])
    print(f"layering enforced: {len(jobs) - len(failures)} passed, {len(failures)} failed "
          f"({refused} upward or sideways edges refused by the build, {len(jobs) - refused} allowed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
